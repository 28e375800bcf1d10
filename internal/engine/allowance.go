package engine

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// allowance is a token bucket paid in advance: a stream takes a token
// before its target is dialled, and gives it back once it proves honest
// (its target sent a byte) or never reached a target connection. A
// stream whose target connection ends without a byte from the target
// keeps its token spent. So, per carrier, target connections whose
// target said nothing are at most burst plus rate a second, however the
// client batches its opens and whether it ends them with resets or
// half-closes; while honest streams, whose target answers within a
// round trip, give their token back at once and never wait for the
// refill.
type allowance struct {
	mu     sync.Mutex
	tokens float64
	burst  float64
	rate   float64 // tokens a second
	last   time.Time
	now    func() time.Time // of the refill; a deadline is the system clock's
	given  chan struct{}    // closed (and replaced) when a token is given back
}

func newAllowance(burst, rate int) *allowance {
	return &allowance{tokens: float64(burst), burst: float64(burst), rate: float64(rate), now: time.Now,
		given: make(chan struct{})}
}

// refill adds the tokens earned since the last call. a.mu is held.
func (a *allowance) refill() {
	now := a.now()
	if !a.last.IsZero() {
		a.tokens = min(a.burst, a.tokens+now.Sub(a.last).Seconds()*a.rate)
	}
	a.last = now
}

// tryTake takes a token if one is there.
func (a *allowance) tryTake() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.refill()
	if a.tokens < 1 {
		return false
	}
	a.tokens--
	return true
}

// take takes a token, waiting for one (refilled, or given back) until
// deadline; it fails with an error wrapping errLimit if none came by
// then, or with ctx's error if ctx ends first.
func (a *allowance) take(ctx context.Context, deadline time.Time) error {
	for {
		a.mu.Lock()
		a.refill()
		if a.tokens >= 1 {
			a.tokens--
			a.mu.Unlock()
			return nil
		}
		refill := time.Duration((1 - a.tokens) / a.rate * float64(time.Second))
		given := a.given
		a.mu.Unlock()
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("%w: the carrier's allowance for streams whose target has not answered is spent", errLimit)
		}
		t := time.NewTimer(min(refill, left))
		select {
		case <-t.C:
		case <-given:
			t.Stop()
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

// give gives a token back (up to the burst) and wakes those waiting.
func (a *allowance) give() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.refill()
	a.tokens = min(a.burst, a.tokens+1)
	close(a.given)
	a.given = make(chan struct{})
}

// streamToken is the token one stream took: refund gives it back, once,
// however many times it is called; a token never refunded stays spent.
type streamToken struct {
	a    *allowance
	once sync.Once
}

// refund gives the token back (nil: a stream that took none).
func (t *streamToken) refund() {
	if t != nil {
		t.once.Do(t.a.give)
	}
}
