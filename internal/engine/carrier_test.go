package engine

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAllowance: tokens are spent by take, never below zero, and come
// back at the rate; ready and wait spend none; a wait that the refill
// cannot end within its bound fails at once as a limit.
func TestAllowance(t *testing.T) {
	now := time.Unix(1000, 0)
	a := newAllowance(3, 10)
	a.now = func() time.Time { return now }
	assert.True(t, a.ready())
	for range 5 {
		a.take()
	}
	assert.False(t, a.ready(), "three tokens, five taken: none left, and no debt")
	now = now.Add(100 * time.Millisecond)
	assert.True(t, a.ready(), "one token back after a tenth of a second")
	assert.NoError(t, a.wait(context.Background(), 0), "a token is there: no wait")
	assert.True(t, a.ready(), "waiting spends nothing")
	a.take()
	err := a.wait(context.Background(), 50*time.Millisecond)
	assert.ErrorIs(t, err, errLimit, "the next token comes after 100 ms, past the bound")
	now = now.Add(time.Hour)
	a.take()
	a.take()
	a.take()
	assert.False(t, a.ready(), "refilled to the burst, not beyond")
}

// TestWaitingStreamsDoNotPauseAccepting: a stream waiting for a place is
// not a connection waiting in the sense of waitRoom: the accept loop goes
// on however many streams wait, and a stream that gets no place within
// the bound is turned away as a limit.
func TestWaitingStreamsDoNotPauseAccepting(t *testing.T) {
	obs := &waitCounter{}
	g := newGate(1, 1, 200*time.Millisecond, slog.New(slog.DiscardHandler), obs)
	ctx := context.Background()
	require.NoError(t, g.enter(ctx))
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- g.enterStream(ctx) }()
	}
	require.Eventually(t, func() bool { return obs.n.Load() == 4 }, time.Second, time.Millisecond, "four streams wait")
	assert.Zero(t, g.waiting.Load(), "none counts as a connection waiting")
	wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	assert.True(t, g.waitRoom(wctx), "streams that wait paused accepting")
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.ErrorIs(t, err, errLimit)
	}
}

// waitCounter counts what waits at a gate.
type waitCounter struct {
	nopObserver
	n atomic.Int64
}

func (w *waitCounter) Waiting(delta int) { w.n.Add(int64(delta)) }

// TestCarrierStreamsWaitingAreBounded: at most maxWaitingStreams streams
// of one carrier wait for a place; one more is refused at once, as a
// limit, while they wait.
func TestCarrierStreamsWaitingAreBounded(t *testing.T) {
	f := &Forwarder{MaxConnsWait: time.Minute}
	g := newGate(1, 1024, time.Minute, slog.New(slog.DiscardHandler), nopObserver{})
	require.NoError(t, g.enter(context.Background()))
	cs := &carrierStreams{allowance: newAllowance(earlyResetBurst, earlyResetRate)}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range maxWaitingStreams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := &link{}
			_, _ = f.admitStream(ctx, l, g, cs, nil)
		}()
	}
	require.Eventually(t, func() bool { return cs.waiting.Load() == maxWaitingStreams }, 5*time.Second, time.Millisecond)
	stage, err := f.admitStream(ctx, &link{}, g, cs, nil)
	assert.Equal(t, stageAdmission, stage)
	assert.ErrorIs(t, err, errLimit)
	assert.ErrorIs(t, err, errStreamLimit)

	// A waiting stream whose stream ends stops waiting at once.
	cancel()
	wg.Wait()
	done := make(chan struct{})
	close(done)
	_, err = f.admitStream(context.Background(), &link{}, g, cs, done)
	assert.ErrorIs(t, err, context.Canceled)
}

// TestRetireCarriers: RetireCarriers sends go-away on the carriers whose
// key it no longer keeps, and on carriers that arrive with such a key
// later; the others are left alone.
func TestRetireCarriers(t *testing.T) {
	f := &Forwarder{}
	peer := &net.TCPAddr{}
	oldKey, newKey := newFakeCarrier(), newFakeCarrier()
	lo := f.carrierServed(oldKey, &Session{Key: "old"}, peer)
	ln := f.carrierServed(newKey, &Session{Key: "new"}, peer)
	keep := func(k string) bool { return k == "new" }
	assert.Equal(t, 1, f.RetireCarriers(keep))
	assert.True(t, isDone(oldKey.GoingAway()), "the old key's carrier goes away")
	assert.False(t, isDone(newKey.GoingAway()), "the loaded key's carrier stays")
	late := newFakeCarrier()
	f.carrierDone(f.carrierServed(late, &Session{Key: "old"}, peer))
	assert.True(t, isDone(late.GoingAway()), "a carrier whose handshake ran with the old key goes away as it arrives")
	f.carrierDone(lo)
	f.carrierDone(ln)
	assert.Empty(t, f.liveCarriers)
}
