package engine

import (
	"context"
	"fmt"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
)

// TestGateWithoutLimit: a negative MaxConns admits any number at once,
// without a channel of that size.
func TestGateWithoutLimit(t *testing.T) {
	g := newGate(-1, 4, time.Second, slog.New(slog.DiscardHandler), nopObserver{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for range 100_000 {
		require.NoError(t, g.enter(ctx))
	}
	assert.Nil(t, g.slots)
	assert.Equal(t, int64(100_000), g.connections())
	for range 100_000 {
		g.leave()
	}
	assert.Zero(t, g.connections())
	assert.True(t, g.waitRoom(ctx), "nothing ever waits at a gate without a limit")
}

// TestGateQueuePausesAccepting: with one place taken and maxWaiting
// connections waiting for it, waitRoom holds the accept loop until one of
// them gets in.
func TestGateQueuePausesAccepting(t *testing.T) {
	g := newGate(1, 2, time.Minute, slog.New(slog.DiscardHandler), nopObserver{})
	ctx := context.Background()
	require.NoError(t, g.enter(ctx))
	entered := make(chan struct{}, 2)
	for range 2 {
		go func() {
			if g.enter(ctx) == nil {
				entered <- struct{}{}
			}
		}()
	}
	require.True(t, settle(func() bool { return g.waiting.Load() == 2 }))
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	assert.False(t, g.waitRoom(short), "accepting went on with the queue full")

	room := make(chan bool, 1)
	go func() { room <- g.waitRoom(ctx) }()
	g.leave()
	<-entered
	select {
	case ok := <-room:
		assert.True(t, ok)
	case <-time.After(5 * time.Second):
		t.Fatal("accepting did not resume when a waiting connection got its place")
	}
	g.leave()
	<-entered
	g.leave()
	assert.Zero(t, g.connections())
}

// TestServeWithoutConnectionLimit: with MaxConns negative, more
// connections than the default limit (100) are forwarded at once.
func TestServeWithoutConnectionLimit(t *testing.T) {
	f := newForwarder(echoServer(t))
	f.MaxConns = -1
	addr := serveWith(t, f)
	for i := range 150 {
		c := dialFrom(t, "127.0.0.1", addr)
		requireEcho(t, c, "x", fmt.Sprintf("connection %d, all the others still open, was not forwarded", i+1))
	}
}

// TestGateWaitIsBounded: with every place taken, enter waits at most
// maxWait, counted as waiting meanwhile, then fails with errLimit; a
// place that comes free in time is taken.
func TestGateWaitIsBounded(t *testing.T) {
	obs := newOutcomes()
	g := newGate(1, 4, time.Second, slog.New(slog.DiscardHandler), obs)
	ctx := context.Background()
	require.NoError(t, g.enter(ctx))
	res := make(chan error, 1)
	go func() { res <- g.enter(ctx) }()
	require.True(t, settle(func() bool { return obs.waiters() == 1 }), "the second is not counted as waiting")
	select {
	case err := <-res:
		assert.ErrorIs(t, err, errLimit)
		assert.Equal(t, "limit", Reason(err))
		assert.Contains(t, err.Error(), "all 1 taken for 1s")
	case <-time.After(10 * time.Second):
		t.Fatal("the wait for a place was not bounded")
	}
	assert.Zero(t, obs.waiters())
	assert.Equal(t, int64(1), g.connections())

	// A place that comes free within the wait is taken.
	go func() { res <- g.enter(ctx) }()
	require.True(t, settle(func() bool { return obs.waiters() == 1 }))
	g.leave()
	assert.NoError(t, <-res)
	g.leave()
	assert.Zero(t, g.connections())
}

// TestGateWithoutWait: with maxWait 0 a connection that finds every
// place taken is turned away at once, without waiting.
func TestGateWithoutWait(t *testing.T) {
	obs := newOutcomes()
	g := newGate(1, 4, 0, slog.New(slog.DiscardHandler), obs)
	ctx := context.Background()
	require.NoError(t, g.enter(ctx))
	assert.ErrorIs(t, g.enter(ctx), errLimit)
	assert.Zero(t, obs.waiters())
	g.leave()
	require.NoError(t, g.enter(ctx), "a free place is taken")
}

// TestGateWaitEndsWithContext: a wait ends when its context does (the
// shutdown's end), with the context's error.
func TestGateWaitEndsWithContext(t *testing.T) {
	g := newGate(0, 4, time.Hour, slog.New(slog.DiscardHandler), nopObserver{})
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() { res <- g.enter(ctx) }()
	require.True(t, settle(func() bool { return g.waiting.Load() == 1 }))
	cancel()
	assert.ErrorIs(t, <-res, context.Canceled)
}

// TestMaxConnsWait: a connection that finds no place within MaxConnsWait
// is reset (not left hanging), counted as an admission failure with
// reason "limit" and logged at WARN, those lines limited per source; the
// connection holding the place is untouched.
func TestMaxConnsWait(t *testing.T) {
	obs := newOutcomes()
	log := &testutil.Log{}
	f := newForwarder(echoServer(t))
	f.MaxConns = 1
	f.MaxConnsWait = 100 * time.Millisecond
	f.Observer = obs
	f.Log = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	addr := serveWith(t, f)
	holder := dialFrom(t, "127.0.0.1", addr)
	requireEcho(t, holder, "x", "the first connection was not served")

	const n = 3 * failureLineBurst
	for i := range n {
		c := dialFrom(t, "127.0.0.1", addr)
		_, err := c.Write([]byte("y"))
		require.NoError(t, err)
		require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
		_, err = c.Read(make([]byte, 1))
		require.ErrorIs(t, err, syscall.ECONNRESET, "connection %d was not reset at the end of its wait", i)
	}
	require.True(t, settle(func() bool { return obs.snapshot()["admission:limit"] == n }), "%v", obs.snapshot())
	assert.Equal(t, failureLineBurst, log.Count(`level=WARN msg="connection failed"`, "stage=admission reason=limit"), log.String())
	assert.Equal(t, 1, log.Count(`level=WARN msg="connection limit reached; new connections wait for a place, and are reset if none comes free in time" max_conns=1 max_wait=100ms`))
	requireEcho(t, holder, "z", "the connection holding the place was disturbed")
	assert.Zero(t, obs.waiters())
}
