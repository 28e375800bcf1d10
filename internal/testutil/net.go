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

// HeldWrites is a connection whose writes wait while held: a test holds
// one end's frames back to make others cross them on the wire.
type HeldWrites struct {
	net.Conn
	mu      sync.Mutex
	gate    chan struct{}
	waiting int // writes that met the gate
}

// Hold makes writes wait from now on, until Release.
func (h *HeldWrites) Hold() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gate = make(chan struct{})
}

// Release lets the waiting writes, and later ones, through.
func (h *HeldWrites) Release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gate != nil {
		close(h.gate)
		h.gate = nil
	}
}

// Blocked is how many writes have met the gate.
func (h *HeldWrites) Blocked() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.waiting
}

func (h *HeldWrites) Write(p []byte) (int, error) {
	h.mu.Lock()
	g := h.gate
	if g != nil {
		h.waiting++
	}
	h.mu.Unlock()
	if g != nil {
		<-g
	}
	return h.Conn.Write(p)
}
