package engine

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// allowance is a token bucket that charges what a peer did after the
// fact: take spends a token (never below zero), and those who must wait
// while it is empty wait until a token has refilled. A carrier's
// allowance charges streams its client reset before their target sent a
// byte, so that a flood of opens and resets gets at most rate target
// connections a second once the burst is spent, while honest streams,
// which cost nothing, never wait.
type allowance struct {
	mu     sync.Mutex
	tokens float64
	burst  float64
	rate   float64 // tokens a second
	last   time.Time
	now    func() time.Time
}

func newAllowance(burst, rate int) *allowance {
	return &allowance{tokens: float64(burst), burst: float64(burst), rate: float64(rate), now: time.Now}
}

// refill adds the tokens earned since the last call. a.mu is held.
func (a *allowance) refill() {
	now := a.now()
	if !a.last.IsZero() {
		a.tokens = min(a.burst, a.tokens+now.Sub(a.last).Seconds()*a.rate)
	}
	a.last = now
}

// take spends a token, if there is one.
func (a *allowance) take() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.refill()
	a.tokens = max(0, a.tokens-1)
}

// ready reports whether a token is there, without spending it.
func (a *allowance) ready() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.refill()
	return a.tokens >= 1
}

// wait returns once a token is there (it is not spent), or ctx's error,
// or, after maxWait, an error wrapping errLimit.
func (a *allowance) wait(ctx context.Context, maxWait time.Duration) error {
	deadline := a.now().Add(maxWait)
	for {
		a.mu.Lock()
		a.refill()
		missing := 1 - a.tokens
		a.mu.Unlock()
		if missing <= 0 {
			return nil
		}
		refill := time.Duration(missing / a.rate * float64(time.Second))
		if a.now().Add(refill).After(deadline) {
			return fmt.Errorf("%w: the carrier's allowance for streams reset early is spent", errLimit)
		}
		t := time.NewTimer(refill)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}
