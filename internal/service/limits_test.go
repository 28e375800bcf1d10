package service_test

import (
	"bytes"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/service"
	"github.com/spipe-dev/spipe/internal/testutil/pipetest"
	"github.com/spipe-dev/spipe/pkg/spipe"
)

func TestMaxConns(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	_, connect := pipetest.Pair(t, tg.Addr, key, func(o *service.Options) { o.MaxConns = 1 })

	first := pipetest.Dial(t, connect.Addr)
	_, err := first.Write([]byte("1"))
	require.NoError(t, err)
	pipetest.RequireAnswer(t, first, "1", "first connection not served")

	second := pipetest.Dial(t, connect.Addr)
	_, err = second.Write([]byte("2"))
	require.NoError(t, err)
	// The second connection waits where it first meets the limit: in
	// connect, which is limited too.
	connect.Log.Wait(t, `level=WARN msg="connection limit reached; new connections wait for a place, and are reset if none comes free in time" max_conns=1 max_wait=10s`, nil)
	pipetest.RequireNoAnswer(t, second, "second connection served while the first held the only slot")
	assert.Equal(t, int32(1), tg.Accepts.Load())

	first.Close()
	pipetest.RequireAnswer(t, second, "2", "second connection not served after the first ended")
	assert.Equal(t, int32(2), tg.Accepts.Load())
}

// TestMaxPending: a peer that connects and says nothing holds the only
// --max-pending place until another connection needs it. It does not keep
// an honest client out: the honest client's connection cuts it (the
// listener resets it and logs why at DEBUG, with one warning about the
// cuts) and is served at once. (Before admission could cut handshakes,
// the honest client waited in the backlog until the staller left.)
func TestMaxPending(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, func(o *service.Options) { o.MaxPending = 1 })
	connect := pipetest.Start(t, service.Connect, "127.0.0.1:0", listen.Addr, key, nil)

	staller := pipetest.Dial(t, listen.Addr)
	pipetest.RequireNoAnswer(t, staller, "the listener answered a peer that said nothing")
	honest := pipetest.Dial(t, connect.Addr)
	_, err := honest.Write([]byte("h"))
	require.NoError(t, err)
	pipetest.RequireAnswer(t, honest, "h", "honest client not served while a staller held the only pending place")
	assert.Equal(t, int32(1), tg.Accepts.Load())

	require.NoError(t, staller.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = staller.Read(make([]byte, 1))
	assert.ErrorIs(t, err, syscall.ECONNRESET, "the staller was not cut")
	listen.Log.Wait(t, `level=DEBUG msg="connection failed" peer=\S+ stage=handshake reason=evicted`, nil)
	listen.Log.Wait(t, `level=WARN msg="pending handshakes cut to admit new connections" cut=1 source=127\.0\.0\.1 max_pending=1 max_pending_per_source=1`, nil)
}

// TestMaxPendingPerSource: the per-source cap reaches the listener: with a
// cap of 2, a third silent peer from the same address cuts the first, and
// the second stays.
func TestMaxPendingPerSource(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, func(o *service.Options) { o.MaxPendingPerSource = 2 })
	first := pipetest.Dial(t, listen.Addr)
	second := pipetest.Dial(t, listen.Addr)
	pipetest.RequireNoAnswer(t, first, "the listener answered a peer that said nothing")
	pipetest.Dial(t, listen.Addr)
	require.NoError(t, first.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err := first.Read(make([]byte, 1))
	assert.ErrorIs(t, err, syscall.ECONNRESET, "the oldest of three from one address was not cut")
	require.NoError(t, second.SetReadDeadline(time.Now().Add(300*time.Millisecond)))
	_, err = second.Read(make([]byte, 1))
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded, "the second was cut, or answered")
}

// TestShutdownCutsPendingHandshakes: a client stuck in its handshake does
// not hold a shutdown (SIGTERM) for the grace period, nor for the
// handshake timeout: the listener cuts it at once and Run returns.
func TestShutdownCutsPendingHandshakes(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, func(o *service.Options) {
		o.ShutdownTimeout = 20 * time.Second
		o.HandshakeTimeout = 20 * time.Second
	})
	staller := pipetest.Dial(t, listen.Addr)
	_, err := staller.Write([]byte{spipe.Version}) // the first byte of a ClientHello, then nothing
	require.NoError(t, err)
	pipetest.RequireNoAnswer(t, staller, "the listener answered a byte")

	start := time.Now()
	listen.Shutdown()
	assert.NoError(t, listen.Wait(t, 10*time.Second))
	// The first-message deadline would cut it 2.5 s from now, the grace
	// period 20 s.
	assert.Less(t, time.Since(start), 1500*time.Millisecond, "a pending handshake held up the shutdown")
	require.NoError(t, staller.SetReadDeadline(time.Now().Add(time.Second)))
	_, err = staller.Read(make([]byte, 1))
	assert.ErrorIs(t, err, syscall.ECONNRESET, "the pending handshake was not cut")
}

func TestHandshakeTimeoutSilentClient(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, func(o *service.Options) {
		o.HandshakeTimeout = 300 * time.Millisecond
	})
	c := pipetest.Dial(t, listen.Addr)
	start := time.Now()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err := c.Read(make([]byte, 1))
	assert.Error(t, err, "the server must close a silent connection")
	el := time.Since(start)
	assert.GreaterOrEqual(t, el, 250*time.Millisecond)
	assert.Less(t, el, 5*time.Second)
	listen.Log.Wait(t, `msg="connection failed" peer=\S+ stage=handshake reason=timeout`, nil)
	assert.Equal(t, int32(0), tg.Accepts.Load())
}

func TestIdleTimeout(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	// Only the listener times out, so the log line to wait for is its own.
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, func(o *service.Options) {
		o.IdleTimeout = 400 * time.Millisecond
	})
	connect := pipetest.Start(t, service.Connect, "127.0.0.1:0", listen.Addr, key, nil)
	c := pipetest.Dial(t, connect.Addr)
	_, err := c.Write([]byte("x"))
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	buf := make([]byte, 1)
	_, err = io.ReadFull(c, buf)
	require.NoError(t, err)
	start := time.Now()
	_, err = c.Read(buf)
	assert.Error(t, err, "idle connection not closed")
	assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
	listen.Log.Wait(t, `stage=transfer reason=idle`, nil)
}

// TestShutdownDrains stops both ends (what SIGTERM does) while a transfer
// is in flight: no new connection is accepted, the open one completes
// intact and Run returns nil on both.
func TestShutdownDrains(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg, release := pipetest.HeldEchoTarget(t)
	listen, connect := pipetest.Pair(t, tg.Addr, key, func(o *service.Options) { o.ShutdownTimeout = 20 * time.Second })
	tr := pipetest.StartTransfer(t, connect.Addr, tg, 2<<20)

	listen.Shutdown()
	connect.Shutdown()
	listen.Log.Wait(t, `msg="shutting down: waiting for open connections" open=1`, nil)
	connect.Log.Wait(t, `msg="shutting down: waiting for open connections" open=1`, nil)
	_, err := net.DialTimeout("tcp", connect.Addr, time.Second)
	assert.Error(t, err, "connect still accepting after the shutdown began")

	release()
	assert.True(t, bytes.Equal(tr.Sent, <-tr.Got), "transfer in flight not completed intact")
	assert.NoError(t, listen.Wait(t, 10*time.Second))
	assert.NoError(t, connect.Wait(t, 10*time.Second))
}

// TestShutdownGraceExpires: a connection that outlives the grace period is
// closed, and Run still returns nil.
func TestShutdownGraceExpires(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := pipetest.NewTarget(t, func(c net.Conn) { io.Copy(io.Discard, c) }) // never answers
	listen, connect := pipetest.Pair(t, tg.Addr, key, func(o *service.Options) { o.ShutdownTimeout = 300 * time.Millisecond })
	c := pipetest.Dial(t, connect.Addr)
	_, err := c.Write([]byte("hang"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return tg.Accepts.Load() == 1 }, 10*time.Second, 10*time.Millisecond)
	listen.Shutdown()
	assert.NoError(t, listen.Wait(t, 10*time.Second))
	listen.Log.Wait(t, `grace period over, closing connections`, nil)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err = io.ReadAll(c)
	// The cut reached connect as a stream without an authenticated end, so
	// it resets our connection rather than ending it cleanly.
	assert.ErrorIs(t, err, syscall.ECONNRESET)
}
