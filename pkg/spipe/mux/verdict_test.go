package mux_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/pkg/spipe"
)

// slowCloseConn is a server's socket on which, once held, every write
// waits until the socket is closed and then fails as a write on a closed
// socket does; its Close lets those writes return before it returns
// itself. So a write's error is sure to reach the session before the
// error of the read that closed the socket.
type slowCloseConn struct {
	*net.TCPConn
	mu      sync.Mutex
	held    bool
	writing chan struct{} // closed once a held write waits
	closed  chan struct{}
	once    sync.Once
}

func newSlowCloseConn(c net.Conn) *slowCloseConn {
	return &slowCloseConn{TCPConn: c.(*net.TCPConn), writing: make(chan struct{}), closed: make(chan struct{})}
}

func (c *slowCloseConn) hold() {
	c.mu.Lock()
	c.held = true
	c.mu.Unlock()
}

func (c *slowCloseConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	held := c.held
	c.mu.Unlock()
	if !held {
		return c.TCPConn.Write(p)
	}
	c.once.Do(func() { close(c.writing) })
	<-c.closed
	return 0, &net.OpError{Op: "write", Net: "tcp", Err: net.ErrClosed}
}

func (c *slowCloseConn) Close() error {
	select {
	case <-c.closed:
	default:
		close(c.closed)
		time.Sleep(100 * time.Millisecond) // the held write reports first
	}
	return c.TCPConn.Close()
}

// TestTamperedCarrierIsReportedAsTampered: when a frame fails
// authentication, the record layer closes the socket, and a write under
// way then fails as a write on a closed socket. The session's error must
// be the frame's (tampered), whichever of the two reaches it first: the
// engine reports a carrier's failure by it.
func TestTamperedCarrierIsReportedAsTampered(t *testing.T) {
	a, b := testutil.TCPPair(t)
	sb := newSlowCloseConn(b)
	client, server := sessions(t, a, sb, nil, nil)

	cs, err := client.Open(context.Background())
	require.NoError(t, err)
	_, err = cs.Write([]byte("hello"))
	require.NoError(t, err)
	ss := accept(t, server)

	sb.hold()
	go func() { _, _ = ss.Write(make([]byte, 1024)) }()
	select {
	case <-sb.writing:
	case <-time.After(5 * time.Second):
		require.FailNow(t, "the server's write never reached its socket")
	}
	// A frame the key holder did not seal: a length of 48 (its inner
	// plaintext) and 48 + 16 bytes that cannot authenticate.
	bogus := append([]byte{0, 0, 48}, make([]byte, 48+16)...)
	_, err = a.Write(bogus)
	require.NoError(t, err)

	select {
	case <-server.Done():
	case <-time.After(10 * time.Second):
		require.FailNow(t, "the server's session did not end")
	}
	assert.ErrorIs(t, server.Err(), spipe.ErrTampered)
}
