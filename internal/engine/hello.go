package engine

import (
	"net"
	"sync/atomic"
	"time"
)

// helloRule is about the protocol's first message, size bytes: the
// admission table spares handshakes that have sent it, and, with a
// timeout, cuts a connection that has not sent it that long after being
// accepted. An honest client sends its first message as soon as it is
// connected, so it arrives with the end of the TCP handshake; a peer that
// sends nothing, garbage short of a message, or a byte now and then is cut
// long before the handshake timeout.
type helloRule struct {
	size    int           // 0: the first message is not watched
	timeout time.Duration // 0: no deadline
}

// watch returns c wrapped to count what the handshake reads from it: in
// runs once size bytes are read, late if the deadline (timeout after
// since) passes before they have arrived. got bytes of the message were
// read before c (with a PROXY header); if that is all of it, the watch
// is over at once and in is the caller's to run.
func (r helloRule) watch(c net.Conn, since time.Time, got int, in, late func()) *helloConn {
	h := &helloConn{Conn: c, need: int64(r.size), in: in}
	h.got.Store(int64(got))
	if h.got.Load() >= h.need {
		h.done.Store(true)
		return h
	}
	if r.timeout > 0 {
		h.timer = time.AfterFunc(time.Until(since.Add(r.timeout)), func() {
			if !h.arrived() {
				late()
			}
		})
	}
	return h
}

// helloConn counts the bytes read from a connection until the first
// message is complete; after that a read costs one atomic load more.
type helloConn struct {
	net.Conn
	need  int64
	got   atomic.Int64
	done  atomic.Bool
	in    func()
	timer *time.Timer
}

func (h *helloConn) Read(p []byte) (int, error) {
	n, err := h.Conn.Read(p)
	if n > 0 && !h.done.Load() && h.got.Add(int64(n)) >= h.need {
		h.stop()
		h.in()
	}
	return n, err
}

// arrived reports whether the whole first message is in: read by the
// handshake, or waiting in the socket for it to read. A handshake whose
// goroutine has not yet run must not count as one still waiting for its
// first message if the peer sent it at once.
func (h *helloConn) arrived() bool {
	if h == nil {
		return false
	}
	if h.done.Load() {
		return true
	}
	n, ok := unread(h.Conn)
	return ok && int64(n) >= h.need-h.got.Load()
}

// stop ends the watch: the first message is in, or the handshake is over.
func (h *helloConn) stop() {
	if h == nil {
		return
	}
	h.done.Store(true)
	if h.timer != nil {
		h.timer.Stop()
	}
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
