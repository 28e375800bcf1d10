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

// frozenAllowance is an allowance whose clock stands still: it never
// refills, so every token a test sees is one it left or gave back.
func frozenAllowance(burst int) *allowance {
	a := newAllowance(burst, 100)
	now := time.Unix(1000, 0)
	a.now = func() time.Time { return now }
	return a
}

// TestAllowance: tokens are taken, never below zero, come back at the
// rate and when given back, never beyond the burst; a wait for one ends
// as soon as one is given back, and at its deadline as a limit.
func TestAllowance(t *testing.T) {
	now := time.Unix(1000, 0)
	a := newAllowance(3, 10)
	a.now = func() time.Time { return now }
	for range 3 {
		assert.True(t, a.tryTake())
	}
	assert.False(t, a.tryTake(), "three tokens, all taken")
	a.give()
	assert.True(t, a.tryTake(), "a token given back is there at once")
	assert.False(t, a.tryTake())
	now = now.Add(100 * time.Millisecond)
	assert.True(t, a.tryTake(), "one token back after a tenth of a second")
	now = now.Add(time.Hour)
	for range 5 {
		a.give()
	}
	n := 0
	for a.tryTake() {
		n++
	}
	assert.Equal(t, 3, n, "refilled and given back up to the burst, not beyond")

	err := a.take(context.Background(), time.Now())
	assert.ErrorIs(t, err, errLimit, "no token, and the deadline is here")

	f := frozenAllowance(1)
	require.True(t, f.tryTake())
	got := make(chan error, 1)
	go func() { got <- f.take(context.Background(), time.Now().Add(time.Hour)) }()
	time.Sleep(20 * time.Millisecond) // most likely waiting by now; if not, it finds the token
	f.give()
	select {
	case err := <-got:
		assert.NoError(t, err, "the token given back")
	case <-time.After(30 * time.Second):
		t.Fatal("a token given back did not end the wait (this clock never refills)")
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { got <- f.take(ctx, time.Now().Add(time.Hour)) }()
	cancel()
	assert.ErrorIs(t, <-got, context.Canceled)
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
		go func() { defer wg.Done(); errs <- g.enterStream(ctx, time.Now().Add(200*time.Millisecond)) }()
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
	cs := &carrierStreams{allowance: frozenAllowance(earlyEndBurst)}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range maxWaitingStreams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := &link{}
			_, _, _ = f.admitStream(ctx, l, g, cs, nil)
		}()
	}
	require.Eventually(t, func() bool { return cs.waiting.Load() == maxWaitingStreams }, 5*time.Second, time.Millisecond)
	token, stage, err := f.admitStream(ctx, &link{}, g, cs, nil)
	assert.Nil(t, token)
	assert.Equal(t, stageAdmission, stage)
	assert.ErrorIs(t, err, errLimit)
	assert.ErrorIs(t, err, errStreamLimit)

	// A waiting stream whose stream ends stops waiting at once.
	cancel()
	wg.Wait()
	done := make(chan struct{})
	close(done)
	_, _, err = f.admitStream(context.Background(), &link{}, g, cs, done)
	assert.ErrorIs(t, err, context.Canceled)
	n := 0
	for cs.allowance.tryTake() {
		n++
	}
	assert.Equal(t, earlyEndBurst, n, "streams that got no place gave their tokens back")
}

// TestStreamAdmissionHasOneDeadline: a stream's wait for its carrier's
// allowance and then for a place ends MaxConnsWait after it began, not
// that plus the gate's own bound; Observer.Waiting counts the stream
// while it waits for either; and the token it got is given back when it
// gets no place.
func TestStreamAdmissionHasOneDeadline(t *testing.T) {
	obs := &waitCounter{}
	f := &Forwarder{MaxConnsWait: 300 * time.Millisecond, Observer: obs}
	g := newGate(1, 1024, time.Hour, slog.New(slog.DiscardHandler), obs) // the gate alone would wait an hour
	require.NoError(t, g.enter(context.Background()))
	cs := &carrierStreams{allowance: frozenAllowance(1)}
	require.True(t, cs.allowance.tryTake())
	type result struct {
		token *streamToken
		err   error
	}
	got := make(chan result, 1)
	go func() {
		token, _, err := f.admitStream(context.Background(), &link{}, g, cs, nil)
		got <- result{token, err}
	}()
	require.Eventually(t, func() bool { return obs.n.Load() == 1 }, 5*time.Second, time.Millisecond,
		"a stream waiting for its carrier's allowance is a stream waiting")
	cs.allowance.give() // now it waits for the place
	select {
	case r := <-got:
		assert.Nil(t, r.token)
		assert.ErrorIs(t, r.err, errLimit)
	case <-time.After(30 * time.Second):
		t.Fatal("the wait for a place outlived MaxConnsWait")
	}
	assert.Zero(t, obs.n.Load(), "no stream waits any more")
	assert.True(t, cs.allowance.tryTake(), "the token of a stream that got no place was given back")
}

// TestGateStreamDeadline: a stream waits at the gate until the deadline
// it brings, whatever the gate's own bound.
func TestGateStreamDeadline(t *testing.T) {
	g := newGate(1, 1024, time.Hour, slog.New(slog.DiscardHandler), nopObserver{})
	require.NoError(t, g.enter(context.Background()))
	assert.ErrorIs(t, g.enterStream(context.Background(), time.Now()), errLimit)
	assert.ErrorIs(t, g.enterStream(context.Background(), time.Now().Add(10*time.Millisecond)), errLimit)
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
