package mux

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/libp2p/go-yamux/v5"
)

// Stream is one stream of a session: a net.Conn with its own flow
// control, the authenticated end of a direction (CloseWrite) and an
// abort the peer sees as such (Reset). One goroutine may Read while
// another Writes.
//
// Read returns io.EOF only after the peer's CloseWrite; a stream the peer
// reset fails with ErrStreamReset, and one whose session ended first with
// ErrSessionClosed. Data the peer wrote before its CloseWrite is never
// lost to a reset that follows it.
type Stream struct {
	s    *yamux.Stream
	sess *Session

	mu          sync.Mutex
	readEnded   bool // Read returned io.EOF
	writeClosed bool // CloseWrite succeeded
}

func newStream(sess *Session, s *yamux.Stream) *Stream { return &Stream{s: s, sess: sess} }

// Read reads the stream's bytes as the peer wrote them.
func (st *Stream) Read(p []byte) (int, error) {
	n, err := st.s.Read(p)
	if n > 0 {
		// The library returns the window update's error with the data it
		// read: once the session has closed, that update fails although
		// the stream may have ended cleanly with data still buffered.
		// The stream's own state decides at the next Read.
		return n, nil
	}
	if err == io.EOF {
		st.mu.Lock()
		st.readEnded = true
		st.mu.Unlock()
		return n, io.EOF
	}
	return n, st.wrap(err)
}

// CloseWrite ends this direction cleanly: the peer's Read returns io.EOF
// once it has read everything written before. Reading continues to work.
func (st *Stream) CloseWrite() error {
	if err := st.s.CloseWrite(); err != nil {
		return st.wrap(err)
	}
	st.mu.Lock()
	st.writeClosed = true
	st.mu.Unlock()
	return nil
}

// Reset aborts the stream in both directions: the peer's Read and Write
// fail with ErrStreamReset (what it had not read of this side's data is
// lost, as with a TCP reset), and so do this side's, with net.ErrClosed.
// A direction that had already ended cleanly stays ended cleanly.
func (st *Stream) Reset() error {
	return st.s.Reset()
}

// Close releases the stream. It ends it cleanly only if both directions
// already have (CloseWrite was called and Read returned io.EOF); in any
// other state it resets the stream, so a stream abandoned on an error
// path (defer st.Close()) is never taken for a complete one by the peer.
func (st *Stream) Close() error {
	st.mu.Lock()
	clean := st.readEnded && st.writeClosed
	st.mu.Unlock()
	if clean {
		return st.s.Close()
	}
	return st.s.Reset()
}

// LocalAddr returns the carrier's local address.
func (st *Stream) LocalAddr() net.Addr { return st.sess.carrier.LocalAddr() }

// RemoteAddr returns the carrier's remote address.
func (st *Stream) RemoteAddr() net.Addr { return st.sess.carrier.RemoteAddr() }

// SetDeadline sets the read and write deadlines, as net.Conn does.
func (st *Stream) SetDeadline(t time.Time) error { return st.s.SetDeadline(t) }

// SetReadDeadline sets the read deadline, as net.Conn does; a Read that
// times out leaves the stream usable.
func (st *Stream) SetReadDeadline(t time.Time) error { return st.s.SetReadDeadline(t) }

// SetWriteDeadline sets the write deadline, as net.Conn does.
func (st *Stream) SetWriteDeadline(t time.Time) error { return st.s.SetWriteDeadline(t) }

// wrap turns the library's errors into this package's.
func (st *Stream) wrap(err error) error {
	var se *yamux.StreamError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, yamux.ErrTimeout):
		return os.ErrDeadlineExceeded
	case errors.As(err, &se) && se.Remote:
		return ErrStreamReset
	case errors.As(err, &se):
		return net.ErrClosed // reset or closed on this side
	case errors.Is(err, yamux.ErrStreamClosed):
		return errWriteClosed
	case errors.Is(err, yamux.ErrStreamReset):
		// A stream the session's end reset, or the local CloseRead of
		// Close: the session tells which.
		select {
		case <-st.sess.y.CloseChan():
			return st.sess.sessionErr(err)
		default:
			return net.ErrClosed
		}
	}
	return st.sess.sessionErr(err)
}

var _ net.Conn = (*Stream)(nil)
