package engine

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGateWithoutLimit: a negative MaxConns admits any number at once,
// without a channel of that size.
func TestGateWithoutLimit(t *testing.T) {
	g := newGate(-1, 4, slog.New(slog.DiscardHandler))
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
	g := newGate(1, 2, slog.New(slog.DiscardHandler))
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
