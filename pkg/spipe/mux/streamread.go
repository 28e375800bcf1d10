package mux

import (
	"fmt"
	"io"
	"os"
)

// The receiving half of a stream: the read loop copies each data frame
// into the stream's ring (deliver) and wakes its reader, the one hand-off
// between the carrier and the reader; the reader (Read, WriteTo) takes
// the data and grants the window back.

// Read reads the stream's bytes as the peer wrote them.
func (st *Stream) Read(p []byte) (int, error) {
	st.mu.Lock()
	for {
		if st.ring.len() > 0 {
			n := st.ring.read(p)
			st.ring.consume(n)
			st.used = true
			st.tookLocked(n)
			st.mu.Unlock()
			return n, nil
		}
		if done, err := st.readEndLocked(len(p)); done {
			st.mu.Unlock()
			return 0, err
		}
		if err := st.waitReadLocked(); err != nil {
			st.mu.Unlock()
			return 0, err
		}
	}
}

// tryWriter is a writer that can also write without blocking: TryWrite
// writes what it can of p at once and returns how much it wrote (0
// without error when it can take nothing now), or why it failed.
type tryWriter interface {
	TryWrite(p []byte) (int, error)
}

// WriteTo implements io.WriterTo, so io.Copy(w, stream) writes each
// piece of received data to w straight from the stream's buffer; it
// returns once the peer has ended its direction (without error), or on
// the first error, the stream's or w's.
//
// If w also has a method TryWrite(p []byte) (int, error) that writes what
// it can of p without blocking, then while WriteTo waits for data the
// session's read loop writes each arriving frame's data to w itself,
// straight from the frame: no copy into the stream's buffer and no
// hand-off to WriteTo's goroutine, which takes over only what w could not
// take at once. (The spipe tool's sockets have it.)
func (st *Stream) WriteTo(w io.Writer) (int64, error) {
	if w == nil {
		return 0, errNilArgument
	}
	tw, _ := w.(tryWriter)
	var total int64
	st.mu.Lock()
	defer func() {
		st.direct = nil
		st.mu.Unlock()
	}()
	for {
		total += st.directN
		st.directN = 0
		if err := st.directErr; err != nil {
			return total, err
		}
		if st.ring.len() > 0 {
			b := st.ring.head()
			st.ring.pin()
			st.used = true
			st.mu.Unlock()
			m, err := w.Write(b)
			st.mu.Lock()
			st.ring.consume(m)
			st.ring.unpin()
			st.tookLocked(m)
			total += int64(m)
			if err == nil && m < len(b) {
				err = io.ErrShortWrite
			}
			if err != nil {
				return total, err
			}
			continue
		}
		if done, err := st.readEndLocked(1); done {
			if err == io.EOF {
				err = nil
			}
			return total, err
		}
		st.direct = tw
		err := st.waitReadLocked()
		st.direct = nil
		if err != nil {
			return total, err
		}
	}
}

// readEndLocked says whether a read with an empty buffer returns now, and
// with what: io.EOF after the peer's end, the stream's error, or nothing
// for an empty read. st.mu is held.
func (st *Stream) readEndLocked(want int) (bool, error) {
	switch {
	case st.recvEnded:
		st.readEnded = true
		st.maybeReleaseLocked()
		return true, io.EOF
	case st.err != nil:
		return true, st.readErr()
	case want == 0:
		return true, nil
	}
	return false, nil
}

// waitReadLocked waits for the read loop to bring something (data, the
// peer's end, a reset) or the read deadline, with st.mu released
// meanwhile. A client stream not yet announced is announced first (an
// open without data), since a reader waits for the peer, and the peer
// must know the stream exists to answer; unless a writer is at work on
// it, which announces it itself. st.mu is held.
func (st *Stream) waitReadLocked() error {
	if !st.announced {
		st.mu.Unlock()
		var err error
		if st.wmu.TryLock() {
			err = st.announceIfNew()
			st.wmu.Unlock()
		}
		st.mu.Lock()
		if err != nil || st.announced {
			return err
		}
	}
	dl := st.readDL.wait()
	st.mu.Unlock()
	defer st.mu.Lock()
	select {
	case <-st.rnotify:
		return nil
	case <-dl:
		return fmt.Errorf("spipe/mux: read: %w", os.ErrDeadlineExceeded)
	case <-st.sess.done:
		return nil // the session's end reached the stream, or reaches it now
	}
}

// tookLocked counts n bytes the reader took from the buffer (consumed
// already) and queues the credit that is due, if any. st.mu is held.
func (st *Stream) tookLocked(n int) {
	st.rx.took(n, st.ring.len())
	st.creditLocked()
}

// creditLocked queues the credit that is due, if any. st.mu is held.
func (st *Stream) creditLocked() {
	if st.recvEnded || st.err != nil {
		return // nothing more will come: no credit needed
	}
	if incr := st.rx.credit(st.ring.len() == 0, st.sess); incr > 0 {
		st.sess.ctl.queue(control1{typ: creditItem, f: streamFrame{id: st.id, incr: incr}})
	}
}

// gatherBelow is the size of a frame's data from which the read loop
// writes it on at once even when more frames are already in (a run):
// smaller frames of a run are gathered into one write, where the copy
// costs less than the system call it saves; a large frame's copy costs
// more (a bulk stream's 1 MiB frames form a run whenever a read brings
// in the start of the next one: 4% of a --mux listener's CPU went to
// that copy and its flush).
const gatherBelow = 64 << 10

// deliver takes a data frame's data and charge in (the read loop only).
// The data is written on at once (to a waiting WriteTo's writer that
// takes it without blocking) or copied into the ring, so a frame, however
// small, costs the stream only its data; its charge is granted back once
// the reader has taken its data (at once for an empty frame that finds
// nothing before it).
func (st *Stream) deliver(data []byte, charge uint64) error {
	st.mu.Lock()
	switch {
	case st.err != nil:
		// Reset here while the read loop brought the frame: it crossed
		// the reset, and is ignored like any frame of a stream not open.
		st.mu.Unlock()
		return nil
	case st.recvEnded:
		st.mu.Unlock()
		return fmt.Errorf("%w: data on stream %d after its end", ErrProtocol, st.id)
	}
	if err := st.rx.admit(charge, st.id); err != nil {
		st.mu.Unlock()
		return err
	}
	s := st.sess
	buffered := st.ring.len()
	if st.direct != nil && len(data) > 0 {
		if buffered == 0 && !st.ring.pinned && (!s.batching || len(data) >= gatherBelow) {
			// WriteTo waits on a writer that does not block: write to
			// it from here, straight from the frame (a large frame even
			// in a run: copying it costs more than the write it would
			// share).
			n := st.tryWriteLocked(data)
			if st.directErr != nil {
				// The writer failed: WriteTo returns, and with it the
				// reader; the stream takes nothing more (a reader that
				// comes later reads what arrives from now on).
				st.rx.arrived(len(data), 0, 0)
				st.mu.Unlock()
				wake(st.rnotify)
				return nil
			}
			st.rx.arrived(n, len(data)-n, 0)
			if data = data[n:]; len(data) == 0 {
				st.creditLocked()
				st.mu.Unlock()
				return nil
			}
			st.ring.write(data, s.cfg.maxWindow)
			st.creditLocked()
			st.mu.Unlock()
			wake(st.rnotify)
			return nil
		}
		// More frames are already in: gather them, and write them to
		// it in one piece once the run ends (flushDirect).
		st.rx.arrived(0, len(data), buffered)
		st.ring.write(data, s.cfg.maxWindow)
		first := !st.dirty
		st.dirty = true
		st.mu.Unlock()
		if first {
			s.dirty = append(s.dirty, st)
		}
		return nil
	}
	st.rx.arrived(0, len(data), buffered)
	st.ring.write(data, s.cfg.maxWindow)
	if len(data) == 0 {
		st.creditLocked() // an empty frame taken at once may make a credit due
	}
	st.mu.Unlock()
	if len(data) > 0 {
		wake(st.rnotify)
	}
	return nil
}

// tryWriteLocked writes what it can of p to the waiting WriteTo's writer
// without blocking and returns how much it wrote; the caller counts it.
// A writer that fails is dropped, its error kept for WriteTo. st.mu is
// held; the caller wakes the reader if the writer failed.
func (st *Stream) tryWriteLocked(p []byte) int {
	n, err := st.direct.TryWrite(p)
	st.directN += int64(n)
	st.used = true
	if err != nil {
		st.directErr, st.direct = err, nil
	}
	return n
}

// flushDirect writes what the read loop gathered for the stream during a
// run of frames to its waiting WriteTo's writer, without blocking, and
// wakes the reader for whatever is left (the read loop only).
func (st *Stream) flushDirect() {
	st.mu.Lock()
	st.dirty = false
	for st.direct != nil && st.ring.len() > 0 && !st.ring.pinned {
		b := st.ring.head()
		n := st.tryWriteLocked(b)
		st.ring.consume(n)
		st.tookLocked(n)
		if n < len(b) || st.directErr != nil {
			break
		}
	}
	left := st.ring.len() > 0 || st.directErr != nil
	st.mu.Unlock()
	if left {
		wake(st.rnotify)
	}
}

// peerEnded takes the peer's end of its direction in (the read loop
// only). s.mu is held.
func (st *Stream) peerEndedLocked() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.recvEnded {
		return fmt.Errorf("%w: a second end on stream %d", ErrProtocol, st.id)
	}
	st.recvEnded = true
	st.sess.endedRecv(st.id)
	wake(st.rnotify)
	st.closeIfEndedLocked()
	return nil
}
