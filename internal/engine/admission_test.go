package engine

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// byteSecure is a stand-in handshake: the peer must send one byte first.
// A peer that sends nothing stalls in it until the handshake timeout.
func byteSecure(_ context.Context, c net.Conn) (Conn, error) {
	if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
		return nil, err
	}
	return c.(Conn), nil
}

// serveWith starts f on a fresh listener and returns its address; the
// test's cleanup stops it.
func serveWith(t *testing.T, f *Forwarder) string {
	t.Helper()
	ln := listenTCP(t)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- f.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-served })
	return ln.Addr().String()
}

// handshakeEcho connects, completes the stand-in handshake and echoes one
// message; it returns how long that took.
func handshakeEcho(t *testing.T, addr string) time.Duration {
	t.Helper()
	start := time.Now()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(20*time.Second)))
	_, err = c.Write([]byte("khello"))
	require.NoError(t, err)
	got := make([]byte, 5)
	_, err = io.ReadFull(c, got)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(got))
	return time.Since(start)
}

// stall opens n connections that never finish their handshake.
func stall(t *testing.T, addr string, n int) {
	t.Helper()
	for range n {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
	}
}

// TestStalledHandshakesDoNotTakeConnectionPlaces: peers stalled in the
// handshake, more of them than MaxConns, do not make a client that
// completes its handshake wait for the handshake timeout (regression: they
// used to hold the MaxConns places).
func TestStalledHandshakesDoNotTakeConnectionPlaces(t *testing.T) {
	f := newForwarder(echoServer(t))
	f.Secure = byteSecure
	f.MaxConns = 2
	f.HandshakeTimeout = 10 * time.Second
	addr := serveWith(t, f)
	stall(t, addr, 10)
	time.Sleep(100 * time.Millisecond) // let the listener take them all in
	assert.Less(t, handshakeEcho(t, addr), 5*time.Second, "the client waited for stalled handshakes")
}

// TestMaxPendingBoundsHandshakes: at MaxPending connections in their
// handshake, the next one waits until a place frees up (here when the
// stalled ones are cut at the handshake timeout).
func TestMaxPendingBoundsHandshakes(t *testing.T) {
	f := newForwarder(echoServer(t))
	f.Secure = byteSecure
	f.MaxPending = 3
	f.HandshakeTimeout = time.Second
	addr := serveWith(t, f)
	stall(t, addr, 3)
	time.Sleep(100 * time.Millisecond)
	d := handshakeEcho(t, addr)
	assert.Greater(t, d, 700*time.Millisecond, "a handshake started beyond MaxPending")
	assert.Less(t, d, 10*time.Second)
}
