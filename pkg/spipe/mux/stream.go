package mux

import (
	"errors"
	"net"
	"sync"
	"time"
)

// Stream is one stream of a session: a net.Conn with its own flow
// control, the authenticated end of a direction (CloseWrite) and an
// abort the peer sees as such (Reset). One goroutine may Read (or
// WriteTo) while another Writes (or ReadFrom).
//
// Read returns io.EOF only after the peer's CloseWrite; a stream the peer
// reset fails with ErrStreamReset, and one whose session ended first with
// ErrSessionClosed. Data the peer sent before its CloseWrite is still
// delivered if it resets the stream afterwards.
type Stream struct {
	sess *Session
	// rnotify and wnotify wake the stream's reader and writer (capacity
	// 1: a wake-up is never lost, and never blocks the read loop).
	rnotify, wnotify chan struct{}
	done             chan struct{} // closed once the stream carries nothing more
	readDL, writeDL  deadline
	wmu              sync.Mutex // one writer at a time: Write, ReadFrom, CloseWrite

	mu sync.Mutex
	// id is set once the stream is announced: a server's at once, a
	// client's when its open goes out (under the session's write token,
	// so ids go out in order).
	id        uint32
	announced bool

	ring      ring       // data received and not yet read
	rx        recvWindow // what this end lets the peer send
	recvEnded bool       // the peer's end arrived: io.EOF once ring is empty
	readEnded bool       // Read returned io.EOF
	// While WriteTo waits on a writer that can write without blocking
	// (tryWriter), the read loop writes arriving data to it directly:
	// direct is that writer, directN what it wrote for WriteTo's count,
	// directErr its failure for WriteTo to return.
	direct    tryWriter
	directN   int64
	directErr error
	dirty     bool // in the session's list of streams to flush (flushDirect)

	tx          sendWindow // what the peer lets this end send
	writeClosed bool       // this end's end was sent

	// err is why reads and writes fail: set once the stream is reset (by
	// either end) or its session ends. A direction that had ended cleanly
	// stays so: data received before the peer's end is still read.
	err      error
	closed   bool // no longer open at the protocol level (both ends, or reset)
	accepted bool // a server's stream was taken by Accept (a client's: always)
	placed   bool // holds a place in the session (NumStreams, MaxStreams)
	used     bool // the application read from it or wrote to it
}

func newStream(s *Session, id uint32) *Stream {
	st := &Stream{
		sess:    s,
		rnotify: make(chan struct{}, 1),
		wnotify: make(chan struct{}, 1),
		done:    make(chan struct{}),
		id:      id, announced: id != 0, accepted: s.client, placed: true,
	}
	st.rx.init()
	st.tx.init()
	return st
}

// Done returns a channel that is closed once the stream can carry
// nothing more in either direction: both directions have ended, either
// end reset it, it was closed, or its session ended. (Data received
// before the peer's end may still be read.)
func (st *Stream) Done() <-chan struct{} { return st.done }

// Reset aborts the stream in both directions: the peer's Read and Write
// fail with ErrStreamReset (what it had not read of this side's data is
// lost, as with a TCP reset), and so do this side's, with net.ErrClosed.
// A direction that had already ended cleanly stays ended cleanly. Reset
// never waits for the carrier: the reset is sent in the background. A
// server's reset of a stream its application has neither read from nor
// written to tells the client that the server did nothing for it (the
// code refused, docs/PROTOCOL.md 7.1), so that it may open it again
// elsewhere.
func (st *Stream) Reset() error {
	st.sess.mu.Lock()
	st.abortLocked(resetAborted, net.ErrClosed, true)
	st.sess.mu.Unlock()
	return nil
}

// Close releases the stream. It ends it cleanly only if both directions
// already have (CloseWrite was called and the peer's end arrived); in any
// other state it resets the stream, so a stream abandoned on an error
// path (defer st.Close()) is never taken for a complete one by the peer.
// Data not yet read is discarded either way.
func (st *Stream) Close() error {
	s := st.sess
	s.mu.Lock()
	defer s.mu.Unlock()
	st.abortLocked(resetAborted, net.ErrClosed, true)
	st.mu.Lock()
	st.ring.release()
	st.maybeReleaseLocked()
	st.mu.Unlock()
	return nil
}

// abortLocked ends the stream with err unless it has ended already: a
// reset (sent to the peer with code if send, and the stream has been
// announced and is still open), the session's end, or the peer's reset.
// s.mu is held.
func (st *Stream) abortLocked(code byte, err error, send bool) {
	s := st.sess
	st.mu.Lock()
	if st.err != nil {
		st.mu.Unlock()
		return
	}
	wasClosed := st.closed
	st.err = err
	if code == resetAborted && !s.client && !st.used {
		code = resetRefused
	}
	if !st.recvEnded {
		st.ring.release()
	}
	st.closed = true
	id, announced := st.id, st.announced
	st.rx.giveBack(s)
	st.maybeReleaseLocked()
	st.mu.Unlock()
	wake(st.rnotify)
	wake(st.wnotify)
	if wasClosed {
		return
	}
	close(st.done)
	if announced {
		s.endedSend(id)
		s.endedRecv(id)
		delete(s.streams, id)
		if send && !s.ended() {
			s.ctl.queue(control1{typ: resetItem, f: streamFrame{id: id, code: code}})
		}
	}
	s.maybeEndLocked()
}

// closeIfEndedLocked closes the stream at the protocol level once both
// directions have ended: it leaves the session, and its id is forgotten.
// s.mu and st.mu are held.
func (st *Stream) closeIfEndedLocked() {
	if st.closed || !st.recvEnded || !st.writeClosed {
		return
	}
	s := st.sess
	st.closed = true
	st.rx.giveBack(s)
	delete(s.streams, st.id)
	close(st.done)
	st.maybeReleaseLocked()
	s.maybeEndLocked()
}

// maybeReleaseLocked gives the stream's place in the session back once
// it holds nothing: it is closed or reset, its data has been read (or
// discarded), and, on a server, Accept has taken it. st.mu is held.
func (st *Stream) maybeReleaseLocked() {
	if st.placed && st.closed && st.accepted && st.ring.len() == 0 {
		st.placed = false
		st.sess.held.Add(-1)
	}
}

// takeAccepted marks a server's stream as taken by Accept, and reports
// whether it is worth handing out: not one the peer reset before it was
// accepted (unless the peer's direction had ended first, whose data is
// still delivered).
func (st *Stream) takeAccepted() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.accepted = true
	st.maybeReleaseLocked()
	return st.err == nil || st.recvEnded
}

// readErr and writeErr are what a read or write meets on a stream that
// has ended. st.mu is held.
func (st *Stream) readErr() error { return st.err }

func (st *Stream) writeErr() error {
	switch {
	case st.err != nil:
		return st.err
	case st.writeClosed:
		return errWriteClosed
	}
	return nil
}

// wake signals c without blocking: c has room for one signal, and one is
// enough for a waiter that checks the state after waking.
func wake(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// LocalAddr returns the carrier's local address.
func (st *Stream) LocalAddr() net.Addr { return st.sess.conn.LocalAddr() }

// RemoteAddr returns the carrier's remote address.
func (st *Stream) RemoteAddr() net.Addr { return st.sess.conn.RemoteAddr() }

// SetDeadline sets the read and write deadlines, as net.Conn does.
func (st *Stream) SetDeadline(t time.Time) error {
	st.readDL.set(t)
	st.writeDL.set(t)
	wake(st.rnotify)
	wake(st.wnotify)
	return nil
}

// SetReadDeadline sets the read deadline, as net.Conn does; a Read that
// times out leaves the stream usable.
func (st *Stream) SetReadDeadline(t time.Time) error {
	st.readDL.set(t)
	wake(st.rnotify)
	return nil
}

// SetWriteDeadline sets the write deadline, as net.Conn does. It bounds
// the wait for the peer's window and for the carrier's turn; a frame
// already being written to the carrier is written whole.
func (st *Stream) SetWriteDeadline(t time.Time) error {
	st.writeDL.set(t)
	wake(st.wnotify)
	return nil
}

// errNilArgument is a nil reader or writer given to ReadFrom or WriteTo.
var errNilArgument = errors.New("spipe/mux: nil argument")

var _ net.Conn = (*Stream)(nil)
