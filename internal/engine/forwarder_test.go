package engine

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// plainSecure stands for the protocol: it hands the connection through.
func plainSecure(_ context.Context, c net.Conn) (Conn, error) { return c.(Conn), nil }

func listenTCP(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return ln
}

// echoServer echoes and half-closes; it returns its address.
func echoServer(t testing.TB) string {
	return serveTCP(t, func(c net.Conn) {
		io.Copy(c, c)
		c.(*net.TCPConn).CloseWrite()
	})
}

// serveTCP serves each connection to a fresh loopback port with serve,
// then closes it; it returns the address. The test's cleanup stops it and
// waits for serve calls to return.
func serveTCP(t testing.TB, serve func(net.Conn)) string {
	ln := listenTCP(t)
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				serve(c)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return ln.Addr().String()
}

// accepted returns both ends of a fresh loopback TCP connection: the
// client's, and the accepted one a Forwarder would handle. The test's
// cleanup closes them.
func accepted(t *testing.T) (client, raw net.Conn) {
	t.Helper()
	ln := listenTCP(t)
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	raw, err = ln.Accept()
	require.NoError(t, err)
	t.Cleanup(func() { client.Close(); raw.Close() })
	return client, raw
}

func newForwarder(target string) *Forwarder {
	td := &TargetDialer{Target: Addr{Network: "tcp", Address: target}}
	return &Forwarder{Secure: plainSecure, SecureSide: SecureInbound, Dial: td.Dial, ShutdownTimeout: time.Second}
}

// TestServeLeavesNoGoroutines runs connections through Serve, stops it and
// checks every goroutine it started is gone.
func TestServeLeavesNoGoroutines(t *testing.T) {
	target := echoServer(t)
	before := runtime.NumGoroutine()
	f := newForwarder(target)
	ln := listenTCP(t)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- f.Serve(ctx, ln) }()

	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", ln.Addr().String())
			if !assert.NoError(t, err) {
				return
			}
			defer c.Close()
			msg := make([]byte, 100_000)
			rand.Read(msg)
			go func() { c.Write(msg); c.(*net.TCPConn).CloseWrite() }()
			got, err := io.ReadAll(c)
			assert.NoError(t, err)
			assert.True(t, bytes.Equal(msg, got))
		}()
	}
	wg.Wait()
	cancel()
	require.NoError(t, <-served)
	// Polled by hand: testify's Eventually runs its condition in a
	// goroutine of its own, which would be counted.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines left, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

// failingConn fails its reads after the first one: a tampered frame.
type failingConn struct {
	Conn
	reads int
}

var errBadFrame = errors.New("bad frame")

func (c *failingConn) Read(p []byte) (int, error) {
	c.reads++
	if c.reads > 1 {
		return 0, errBadFrame
	}
	return c.Conn.Read(p)
}

// TestOneDirectionFailingAbortsBoth: the client side fails while the
// target side is blocked reading a silent target; the failure must close
// both at once and reset the target rather than end its stream cleanly.
func TestOneDirectionFailingAbortsBoth(t *testing.T) {
	targetLn := listenTCP(t)
	defer targetLn.Close()
	targetErr := make(chan error, 1)
	go func() {
		c, err := targetLn.Accept()
		if err != nil {
			targetErr <- err
			return
		}
		defer c.Close()
		_, err = io.ReadAll(c) // never writes: the target→client copy blocks
		targetErr <- err
	}()
	f := newForwarder(targetLn.Addr().String())
	f.Secure = func(_ context.Context, c net.Conn) (Conn, error) { return &failingConn{Conn: c.(Conn)}, nil }

	client, raw := accepted(t)
	client.Write([]byte("first read passes"))
	go func() { time.Sleep(50 * time.Millisecond); client.Write([]byte("second read fails")) }()

	done := make(chan error, 1)
	go func() { done <- f.Handle(context.Background(), raw) }()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, errBadFrame)
		var te *TransferError
		if assert.ErrorAs(t, err, &te) {
			assert.Equal(t, "client", te.Side)
			assert.Equal(t, "read", te.Op)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Handle still running: the failure did not abort the blocked direction")
	}
	assert.ErrorIs(t, <-targetErr, syscall.ECONNRESET, "target must see a reset, not a clean end")
}

func TestIdleTimeoutCloses(t *testing.T) {
	f := newForwarder(echoServer(t))
	f.IdleTimeout = 200 * time.Millisecond
	client, raw := accepted(t)
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- f.Handle(context.Background(), raw) }()

	// Activity keeps it open past the timeout...
	for range 5 {
		_, err := client.Write([]byte("x"))
		require.NoError(t, err)
		_, err = io.ReadFull(client, make([]byte, 1))
		require.NoError(t, err)
		time.Sleep(80 * time.Millisecond)
	}
	// ...and silence closes it.
	select {
	case err := <-done:
		assert.ErrorIs(t, err, errIdle)
		assert.Equal(t, "idle", Reason(err))
		assert.Greater(t, time.Since(start), 400*time.Millisecond)
	case <-time.After(5 * time.Second):
		t.Fatal("idle connection not closed")
	}
}

func TestHandshakeTimeout(t *testing.T) {
	f := newForwarder(echoServer(t))
	f.HandshakeTimeout = 100 * time.Millisecond
	f.Secure = func(ctx context.Context, c net.Conn) (Conn, error) {
		_, err := c.Read(make([]byte, 1)) // a peer that says nothing
		return nil, err
	}
	_, raw := accepted(t) // a client that says nothing
	start := time.Now()
	err := f.Handle(context.Background(), raw)
	assert.Equal(t, "timeout", Reason(err), "%v", err)
	assert.Less(t, time.Since(start), 2*time.Second)
}

func TestReason(t *testing.T) {
	for err, want := range map[error]string{
		errShutdown:                        "shutdown",
		errIdle:                            "idle",
		context.DeadlineExceeded:           "timeout",
		syscall.ECONNREFUSED:               "refused",
		syscall.ECONNRESET:                 "reset",
		io.ErrUnexpectedEOF:                "eof",
		&net.DNSError{Err: "no such host"}: "dns",
		errors.New("something else"):       "other",
		&TransferError{Side: "target", Op: "write", Err: syscall.EPIPE}: "reset",
	} {
		assert.Equal(t, want, Reason(err), "%v", err)
	}
}

// TestHandleLeavesAFailedConnectionToItsCaller: a stdio connection whose
// handshake fails is not closed by Handle, so its caller can report the
// failure before the peer (ssh) sees the stream end and exits; Serve's
// connections, in contrast, are reset at once.
func TestHandleLeavesAFailedConnectionToItsCaller(t *testing.T) {
	f := newForwarder(echoServer(t))
	f.SecureSide = SecureOutbound
	f.Secure = func(ctx context.Context, c net.Conn) (Conn, error) { return nil, errors.New("refused") }
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	conn := &StdioConn{R: stdinR, W: stdoutW}
	require.Error(t, f.Handle(context.Background(), conn))

	// Still open: a write to stdout reaches its reader, and stdin's writer
	// is not told the reader went away.
	go stdoutW.Write([]byte("x"))
	b := make([]byte, 1)
	_, err := io.ReadFull(stdoutR, b)
	require.NoError(t, err, "Handle closed stdout")
	require.NoError(t, conn.Close())
	_, err = stdinW.Write([]byte("y"))
	assert.ErrorIs(t, err, io.ErrClosedPipe, "the caller's Close closes it")
}
