package mux

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"github.com/spipe-dev/spipe/pkg/spipe/frame"
	"github.com/spipe-dev/spipe/pkg/spipe/internal/pool"
)

// The sending half of a stream: each writer seals and writes its own
// frames on the carrier, taking the session's write token for each frame
// (no goroutine in between), after waiting for room in the stream's
// window.

// smallPayload is the inner plaintext of a small frame: what interactive
// writes and bulk writers on a shared session use (as a plain
// connection's small tier).
const smallPayload = 64 << 10

// smallData and bigData are how many data bytes a small and a large
// stream frame carry on this session.
func (s *Session) smallData() int { return min(smallPayload-1, s.maxBody) - idFields }
func (s *Session) bigData() int   { return s.maxBody - idFields }

// frameBuf takes a send buffer for frames carrying up to data bytes.
func (s *Session) frameBuf(data int) *[]byte { return pool.Get(s.frames.FrameLen(data + idFields)) }

// Write writes p to the stream, blocking while the peer's window for it
// is full. It fails after CloseWrite, Reset or Close, and once the peer
// reset the stream or the session ended. The stream's first Write carries
// its open.
func (st *Stream) Write(p []byte) (int, error) {
	st.wmu.Lock()
	defer st.wmu.Unlock()
	s := st.sess
	if len(p) == 0 {
		return 0, st.announceIfNew()
	}
	size := s.smallData()
	if len(p) > size {
		size = max(size, s.bigData())
	}
	bp := s.frameBuf(size)
	defer pool.Put(bp)
	buf := *bp
	n := 0
	for len(p) > 0 {
		want := min(len(p), size)
		if s.sendShared() {
			want = min(want, sharedFrame)
		}
		room, err := st.waitRoom(want)
		if err != nil {
			return n, err
		}
		k := copy(buf[s.off:s.off+room], p)
		if err := st.sendFrame(buf, frame.StreamData, k); err != nil {
			return n, err
		}
		n += k
		p = p[k:]
	}
	return n, nil
}

// ReadFrom implements io.ReaderFrom: io.Copy into a stream reads r
// straight into the next frame's data and seals it in place, each read of
// up to one frame's data becoming one frame, as a plain connection's
// ReadFrom does. A read goes into a large frame (up to 1 MiB, as large as
// the carrier allows) when r already holds more than a small frame's worth
// (64 KiB) and no other stream of the session is sending, and into a
// small frame otherwise: so a bulk source is sealed in large frames, an
// interactive one in frames of exactly what each read returned, and a
// large buffer is never held across a read that waits. (For a reader that
// cannot say what it holds, which is anything but a socket or a reader
// with a Len, two reads in a row that fill a small frame move to large
// ones, and two that leave a large one under a small frame's worth move
// back.) r's io.EOF ends it without error (and without CloseWrite).
//
// A stream not yet announced goes out with the first read's data when r
// already has data waiting, and otherwise with an open of its own at
// once, so that a peer that speaks first is not kept waiting.
func (st *Stream) ReadFrom(r io.Reader) (int64, error) {
	if r == nil {
		return 0, errNilArgument
	}
	st.wmu.Lock()
	defer st.wmu.Unlock()
	s := st.sess
	st.mu.Lock()
	err, announced := st.writeErr(), st.announced
	st.mu.Unlock()
	if err != nil {
		return 0, err
	}
	// What r holds (known: r can tell) sizes each read's frame, and for a
	// stream not yet announced decides whether the first read rides in
	// the open. It is asked after a read that took all it could, or a
	// large one, and before the first read of a stream not announced:
	// otherwise (a short read, an interactive source; the first read of
	// an announced stream) the next read is small without asking, which
	// spares a connection's first read a system call, and a source that
	// has more fills that small frame and is asked before the next.
	waiting, known, asked := 0, true, true
	if !announced {
		waiting, known = available(r)
		if !known || waiting == 0 {
			if err := st.announce(); err != nil {
				return 0, err
			}
		}
	}
	small := s.frameBuf(s.smallData())
	defer pool.Put(small)
	var big *[]byte
	defer func() {
		if big != nil {
			pool.Put(big)
		}
	}()
	bigger := s.bigData() > s.smallData()
	var n int64
	var guess sizeGuess
	for {
		// Room first: what the source holds is best judged once the
		// window lets the next frame go.
		room, err := st.waitRoom(s.bigData())
		if err != nil {
			return n, err
		}
		if !asked {
			waiting, known = available(r)
		}
		if !known {
			waiting = guess.waiting(s.smallData())
		}
		shared := s.sendShared()
		useBig := bigger && waiting > s.smallData() && !shared
		buf := *small
		if shared {
			room = min(room, sharedFrame)
		}
		if useBig {
			if big == nil {
				big = s.frameBuf(s.bigData())
			}
			buf = *big
		} else {
			if big != nil {
				pool.Put(big)
				big = nil
			}
			room = min(room, s.smallData())
		}
		m, rerr := r.Read(buf[s.off : s.off+room])
		if m > 0 {
			if err := st.sendFrame(buf, frame.StreamData, m); err != nil {
				return n, err
			}
			n += int64(m)
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, rerr
		}
		if !known {
			guess.read(m, room, useBig, s.smallData())
		}
		asked = known && m < room && !useBig
		if asked {
			waiting = 0 // a short read: r had no more
		}
	}
}

// sizeGuess stands in for what a reader that cannot say what it holds
// has: it counts as holding more than a small frame's worth once two
// reads in a row have filled a small frame, and no longer once two reads
// in a row have left a large one under a small frame's worth.
type sizeGuess struct {
	large       bool
	fulls, thin int
}

func (g *sizeGuess) waiting(small int) int {
	if g.large {
		return small + 1
	}
	return 0
}

func (g *sizeGuess) read(m, room int, large bool, small int) {
	switch {
	case !large && m == room:
		if g.fulls++; g.fulls >= 2 {
			g.large, g.fulls = true, 0
		}
	case !large:
		g.fulls = 0
	case m < small:
		if g.thin++; g.thin >= 2 {
			g.large, g.thin = false, 0
		}
	default:
		g.thin = 0
	}
}

// CloseWrite ends this direction cleanly: the peer's Read returns io.EOF
// once it has read everything written before. Reading continues to work.
// Calling it again does nothing.
func (st *Stream) CloseWrite() error {
	st.wmu.Lock()
	defer st.wmu.Unlock()
	st.mu.Lock()
	again, err := st.writeClosed && st.err == nil, st.writeErr()
	st.mu.Unlock()
	switch {
	case again:
		return nil
	case err != nil:
		return err
	}
	if err := st.announceIfNew(); err != nil {
		return err
	}
	bp := st.sess.frameBuf(0)
	defer pool.Put(bp)
	return st.sendFrame(*bp, frame.StreamEnd, 0)
}

// announceIfNew sends a stream's open, alone, unless it has gone out.
// st.wmu is held.
func (st *Stream) announceIfNew() error {
	st.mu.Lock()
	announced := st.announced
	st.mu.Unlock()
	if announced {
		return nil
	}
	return st.announce()
}

// announce sends the stream's open without data. st.wmu is held.
func (st *Stream) announce() error {
	if _, err := st.waitRoom(0); err != nil {
		return err
	}
	bp := st.sess.frameBuf(0)
	defer pool.Put(bp)
	return st.sendFrame(*bp, frame.StreamData, 0)
}

// waitRoom waits until the peer's window lets a frame carry data (or,
// for want 0, lets an empty frame go), and returns how many of want bytes
// one frame may carry now.
func (st *Stream) waitRoom(want int) (int, error) {
	st.mu.Lock()
	for {
		if err := st.writeErr(); err != nil {
			st.mu.Unlock()
			return 0, err
		}
		if r := st.tx.room(); r >= 1 || want == 0 && r == 0 {
			st.mu.Unlock()
			return min(want, r), nil
		}
		dl := st.writeDL.wait()
		st.mu.Unlock()
		select {
		case <-st.wnotify:
		case <-dl:
			return 0, fmt.Errorf("spipe/mux: write: %w", os.ErrDeadlineExceeded)
		case <-st.sess.done:
		}
		st.mu.Lock()
	}
}

// sendFrame seals and writes one frame of the stream: t with k data
// bytes staged in buf at the body's start (an open instead of stream
// data when the stream goes out for the first time), or an end. The
// stream's id goes right behind the data. st.wmu is held, and for data
// waitRoom has found room for k bytes.
func (st *Stream) sendFrame(buf []byte, t frame.Type, k int) error {
	s := st.sess
	if err := s.acquire(st.writeDL.wait()); err != nil {
		return err
	}
	defer s.release()
	if s.wclosed {
		return s.sessionErr()
	}
	id, t, err := st.idToSend(t)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(buf[s.off+k:], id)
	if t != frame.StreamEnd {
		st.mu.Lock()
		st.tx.spent += uint64(k) + frameCharge
		st.mu.Unlock()
	}
	if err := s.frames.SendOne(buf, t, k+idFields); err != nil {
		s.writeFailed(err)
		return fmt.Errorf("%w: %w", ErrSessionClosed, err)
	}
	if k > 0 {
		s.noteSend(id)
	}
	if t == frame.StreamEnd {
		s.endedSend(id)
		s.mu.Lock()
		st.mu.Lock()
		st.writeClosed = true
		st.closeIfEndedLocked()
		st.mu.Unlock()
		s.mu.Unlock()
	}
	return nil
}

// idToSend returns the stream's id for a frame about to go out, and the
// frame's type: for a client stream going out for the first time, it
// takes the next stream id and makes the frame its open. It fails if
// the stream ended meanwhile, or can no longer be opened. The write token
// is held, so ids go out in the order they are taken.
func (st *Stream) idToSend(t frame.Type) (uint32, frame.Type, error) {
	st.mu.Lock()
	if err := st.err; err != nil {
		st.mu.Unlock()
		return 0, t, err
	}
	if st.announced {
		id := st.id
		st.used = true
		st.mu.Unlock()
		return id, t, nil
	}
	st.mu.Unlock()
	s := st.sess
	s.mu.Lock()
	defer s.mu.Unlock()
	var why error
	switch {
	case s.ended():
		why = s.sessionErr()
	case s.wclosed, s.goAwaySent, s.goAwayRecv:
		why = ErrGoAway
	case s.highest == maxStreamID:
		why = errIDsExhausted
	}
	if why != nil {
		// It never went out: nothing to tell the peer.
		st.abortLocked(resetAborted, why, false)
		return 0, t, why
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.err != nil {
		return 0, t, st.err
	}
	s.highest++
	st.id, st.announced = s.highest, true
	s.streams[st.id] = st
	return st.id, frame.StreamOpen, nil
}

// credited takes a credit in (the read loop only).
func (st *Stream) credited(incr uint32) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if incr == 0 || st.writeClosed || st.err != nil {
		return nil // grants nothing, or nothing more will be sent (7.3)
	}
	if err := st.tx.credit(incr, st.id); err != nil {
		return err
	}
	wake(st.wnotify)
	return nil
}
