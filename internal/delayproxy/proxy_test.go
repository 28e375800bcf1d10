package delayproxy

import (
	"bytes"
	"crypto/rand"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/spipe-dev/spipe/internal/testutil/pipetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const delay = 20 * time.Millisecond

// echoServer echoes each connection and half-closes after the client
// does; a connection whose first byte is 'R' is reset instead.
func echoServer(t *testing.T) string {
	t.Helper()
	return pipetest.NewTarget(t, func(c net.Conn) {
		tc := c.(*net.TCPConn)
		first := make([]byte, 1)
		if _, err := io.ReadFull(tc, first); err != nil {
			return
		}
		if first[0] == 'R' {
			tc.SetLinger(0)
			return
		}
		tc.Write(first)
		io.Copy(tc, tc)
		tc.CloseWrite()
	}).Addr
}

func start(t *testing.T) *Proxy {
	t.Helper()
	p, err := Start("127.0.0.1:0", echoServer(t), delay)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

// TestNeverEarly: the model's lower bounds hold: a new connection's first
// echoed byte comes back no earlier than two round trips (three one-way
// delays to reach the server, as TCP's handshake takes, and one back),
// and a round trip on an open connection no earlier than two delays.
func TestNeverEarly(t *testing.T) {
	p := start(t)
	for range 3 {
		t0 := time.Now()
		c, err := net.Dial("tcp", p.Addr())
		require.NoError(t, err)
		_, err = c.Write([]byte("x"))
		require.NoError(t, err)
		b := make([]byte, 1)
		_, err = io.ReadFull(c, b)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, time.Since(t0), 4*delay, "first byte")
		t1 := time.Now()
		_, err = c.Write([]byte("y"))
		require.NoError(t, err)
		_, err = io.ReadFull(c, b)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, time.Since(t1), 2*delay, "round trip")
		assert.Less(t, time.Since(t0), 5*time.Second)
		c.Close()
	}
}

// TestBytesAndEnds: bytes arrive intact and in order, a half-close is
// relayed as a half-close, and a reset as a reset.
func TestBytesAndEnds(t *testing.T) {
	p := start(t)
	msg := make([]byte, 3<<20)
	rand.Read(msg)
	msg[0] = 'x'
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c.Close()
	go func() { c.Write(msg); c.(*net.TCPConn).CloseWrite() }()
	got, err := io.ReadAll(c)
	require.NoError(t, err, "the server's half-close arrives as the end")
	assert.True(t, bytes.Equal(msg, got))

	r, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer r.Close()
	_, err = r.Write([]byte("R"))
	require.NoError(t, err)
	require.NoError(t, r.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = io.ReadAll(r)
	assert.ErrorIs(t, err, syscall.ECONNRESET)
}
