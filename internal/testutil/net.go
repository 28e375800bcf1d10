package testutil

import (
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TCPPair returns the two ends of a fresh loopback TCP connection: the
// dialling one and the accepted one. The test's cleanup closes both.
func TCPPair(t testing.TB) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept() // nil on failure, which the check below reports
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	server = <-accepted
	require.NotNil(t, server, "accept failed")
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// RecordingConn keeps a copy of everything written to it: what one end
// of a session put on the wire, for the transcript tests.
type RecordingConn struct {
	net.Conn
	mu      sync.Mutex
	written []byte
}

func (r *RecordingConn) Write(p []byte) (int, error) {
	r.mu.Lock()
	r.written = append(r.written, p...)
	r.mu.Unlock()
	return r.Conn.Write(p)
}

// Bytes returns a copy of what was written so far.
func (r *RecordingConn) Bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]byte(nil), r.written...)
}
