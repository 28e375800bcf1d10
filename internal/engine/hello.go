package engine

import (
	"net"
	"sync/atomic"
	"time"
)

// helloRule is the first-message deadline: a peer must have sent size
// bytes (the protocol's first message) within timeout of being accepted.
// An honest client sends its first message as soon as it is connected, so
// it arrives with the end of the TCP handshake; a peer that sends nothing,
// garbage short of a message, or a byte now and then is cut long before
// the handshake timeout.
type helloRule struct {
	size    int
	timeout time.Duration
}

// watch starts the deadline for c and returns c wrapped to count what the
// handshake reads from it; late runs if the count is short when the
// deadline passes.
func (r helloRule) watch(c net.Conn, late func()) *helloConn {
	h := &helloConn{Conn: c, need: int64(r.size)}
	h.timer = time.AfterFunc(r.timeout, func() {
		if !h.done.Load() {
			late()
		}
	})
	return h
}

// helloConn counts the bytes read from a connection until the first
// message is complete; after that a read costs one atomic load more.
type helloConn struct {
	net.Conn
	need  int64
	got   atomic.Int64
	done  atomic.Bool
	timer *time.Timer
}

func (h *helloConn) Read(p []byte) (int, error) {
	n, err := h.Conn.Read(p)
	if n > 0 && !h.done.Load() && h.got.Add(int64(n)) >= h.need {
		h.stop()
	}
	return n, err
}

// stop ends the watch: the first message is in, or the handshake is over.
func (h *helloConn) stop() {
	if h == nil {
		return
	}
	h.done.Store(true)
	h.timer.Stop()
}

// CloseWrite half-closes the connection if it can: the protocol above
// half-closes what it was given.
func (h *helloConn) CloseWrite() error {
	if c, ok := h.Conn.(interface{ CloseWrite() error }); ok {
		return c.CloseWrite()
	}
	return nil
}

// NetConn returns the watched connection, so abortConn resets it.
func (h *helloConn) NetConn() net.Conn { return h.Conn }
