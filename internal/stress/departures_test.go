package stress

import (
	"bytes"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/service"
	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/pipetest"
)

// noLeaks checks, once the test's connections are over, that the
// goroutine count is back to what it was.
func noLeaks(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines left, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

// TestTargetGoesAwayMidStream: the target resets the connection after
// part of the stream. The client sees an error, not a clean end, and both
// services log how the connection ended: reset by the target, which is
// the application's doing, not a failure.
func TestTargetGoesAwayMidStream(t *testing.T) {
	key := pipetest.KeyFile(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				io.CopyN(c, c, 64<<10) // echo a little, then vanish
				c.(*net.TCPConn).SetLinger(0)
				c.Close()
			}()
		}
	}()
	listen, connect := pipetest.Pair(t, ln.Addr().String(), key, nil)
	before := runtime.NumGoroutine()

	start := time.Now()
	r := echo(connect.Addr, 1, 1<<20, true, 30*time.Second)
	require.Error(t, r.err, "the client took a cut stream for a complete one")
	assert.False(t, isTimeout(r.err), "the client hung: %v", r.err)
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.True(t, bytes.HasPrefix(r.sent, r.got))
	listen.Log.WaitCount(t, 1, 10*time.Second, `msg="connection closed"`, "end=reset", `err="target `)
	connect.Log.WaitCount(t, 1, 10*time.Second, `msg="connection closed"`, "end=reset")
	assert.Zero(t, listen.Log.Count("connection failed")+connect.Log.Count("connection failed"))
	t.Logf("listen: %s", testutil.Tail(listen.Log.String(), 2))
	noLeaks(t, before)
}

// TestClientGoesAwayMidStream: the plaintext client resets its connection
// mid-stream. The target sees an error (never a clean end), and both
// services log the end: reset, by the client.
func TestClientGoesAwayMidStream(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := startTarget(t, true)
	listen, connect := pipetest.Pair(t, tg.addr(), key, nil)
	before := runtime.NumGoroutine()

	c, err := net.Dial("tcp", connect.Addr)
	require.NoError(t, err)
	data := payload(7, 256<<10)
	_, err = c.Write(data)
	require.NoError(t, err)
	_, err = io.ReadFull(c, make([]byte, 100<<10)) // the stream is flowing
	require.NoError(t, err)
	require.NoError(t, c.(*net.TCPConn).SetLinger(0))
	require.NoError(t, c.Close())

	rec := tg.waitRecord(t, 7, 10*time.Second)
	assert.False(t, rec.clean, "the target took a cut stream for a complete one")
	assert.True(t, bytes.HasPrefix(data, rec.got))
	connect.Log.WaitCount(t, 1, 10*time.Second, `msg="connection closed"`, "end=reset", `err="client `)
	listen.Log.WaitCount(t, 1, 10*time.Second, `msg="connection closed"`, "end=reset")
	assert.Zero(t, listen.Log.Count("connection failed")+connect.Log.Count("connection failed"))
	t.Logf("connect: %s", testutil.Tail(connect.Log.String(), 2))
	noLeaks(t, before)
}

// TestListenerRestartWhileClientsReconnect: clients keep echoing through a
// connect/listen pair, retrying on failure, while the listener is stopped
// and started again on the same port several times. Every client finishes
// its rounds, no echo ever differs from what was sent, and nothing hangs.
func TestListenerRestartWhileClientsReconnect(t *testing.T) {
	workers := pick(6, 32)
	rounds := pick(15, 100)
	restarts := pick(3, 10)
	key := pipetest.KeyFile(t)
	tg := startTarget(t, false)
	quick := func(o *service.Options) { o.ShutdownTimeout = 100 * time.Millisecond }
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.addr(), key, quick)
	addr := listen.Addr
	connect := pipetest.Start(t, service.Connect, "127.0.0.1:0", addr, key, nil)

	var failures, corrupt atomic.Int64
	var wg sync.WaitGroup
	var id atomic.Uint64
	var restarted atomic.Bool // the clients keep going at least until then
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := 0; done < rounds || !restarted.Load(); {
				r := echo(connect.Addr, id.Add(1), 64<<10, true, 30*time.Second)
				if !bytes.HasPrefix(r.sent, r.got) {
					corrupt.Add(1)
				}
				if r.intact() {
					done++
					continue
				}
				failures.Add(1)
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	logs := []*testutil.Log{listen.Log}
	for range restarts {
		time.Sleep(200 * time.Millisecond)
		listen.Stop(t)
		time.Sleep(100 * time.Millisecond)
		listen = pipetest.Start(t, service.Listen, addr, tg.addr(), key, quick)
		listen.Log.WaitCount(t, 1, 10*time.Second, "serving")
		logs = append(logs, listen.Log)
	}
	restarted.Store(true)
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(5 * time.Minute):
		t.Fatal("clients did not finish: something hangs")
	}
	assert.Zero(t, corrupt.Load(), "an echo differed from what was sent")
	t.Logf("%d workers x at least %d rounds, %d listener restarts, %d failed attempts retried", workers, rounds, restarts, failures.Load())
	for _, l := range logs {
		assert.Equal(t, 1, l.Count("serving", "mode=listen"))
	}
	// The stops were seen: connect logged failed connections (refused
	// while down, cut while shutting down) unless every stop fell between
	// connections.
	if failures.Load() > 0 {
		assert.Positive(t, connect.Log.Count("connection failed"), "connect logged none of %d failures", failures.Load())
	}
}
