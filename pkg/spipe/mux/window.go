package mux

import (
	"fmt"
	"time"
)

// Flow control (docs/PROTOCOL.md 7.3). Each direction of a stream has a
// window counted in charges: an open or stream data frame costs its data
// and frameCharge more. The receiver grants; the sender spends.

// sharedFor is how long after two streams have taken turns a session
// counts as shared: its streams then have no more than sharedWindow in
// flight toward this end (receiving), and writers send frames of at most
// sharedFrame data bytes (sending), so that no stream waits behind much
// of another's data: a frame in the carrier's turn, a window in the
// carrier's queue.
const (
	sharedFor    = 100 * time.Millisecond
	sharedWindow = 64 << 10
	sharedFrame  = 16 << 10
)

// recvWindow is what this end lets the peer send on a stream. Every
// charge received is, at any time, in one of three places: given back
// (taken: its data was delivered, or it had none), still in the stream's
// buffer (the data bytes there), or held (the per-frame charges of the
// frames whose data is in the buffer). So received = taken + buffered +
// held, and once the buffer is empty every charge received is taken and
// may be granted again (docs/PROTOCOL.md 7.3, Giving back): a reader that
// keeps up never leaves its sender short, whatever the sizes of its
// frames, empty ones included.
type recvWindow struct {
	granted  uint64 // the initial window and every credit sent
	received uint64 // charges received
	taken    uint64 // charges given up by what was delivered (so they may be granted again)
	held     uint64 // per-frame charges of frames whose data is still in the buffer
	window   uint64 // how far beyond what was taken this end grants
}

func (w *recvWindow) init() {
	w.granted, w.window = MinStreamWindow, MinStreamWindow
}

// admit counts a frame of the given charge in, or fails if it overruns
// the window.
func (w *recvWindow) admit(charge uint64, id uint32) error {
	if w.received+charge > w.granted {
		return fmt.Errorf("%w: stream %d sent %d bytes beyond its window", ErrProtocol, id, w.received+charge-w.granted)
	}
	w.received += charge
	return nil
}

// arrived counts in a frame just admitted whose data bytes were written
// on at once (direct) and whose other data bytes went into the buffer,
// which held buffered bytes before it. Its per-frame charge is held while
// any of its data is in the buffer; an empty frame behind data is held as
// if it had a byte there, and one that finds the buffer empty is taken at
// once, having nothing to deliver.
func (w *recvWindow) arrived(direct, stored, buffered int) {
	w.taken += uint64(direct)
	if stored > 0 || buffered > 0 {
		w.held += frameCharge
	} else {
		w.taken += frameCharge
	}
}

// took counts n bytes the reader took from the buffer, left bytes being
// still there: the data is taken, and the per-frame charges held with it
// in proportion (all of them once the buffer is empty).
func (w *recvWindow) took(n, left int) {
	release := w.held
	if left > 0 {
		release = w.held * uint64(n) / uint64(n+left)
	}
	w.held -= release
	w.taken += uint64(n) + release
}

// credit returns the credit to send, if one is due, after the reader took
// something (or a frame was taken at once): once what it took since the
// last credit is half the window (a bulk stream's credit then costs one
// frame each way per half window, while the other half keeps it moving).
// The window grows (doubling, up to the session's MaxStreamWindow, within
// its growth budget) when the reader has emptied the buffer (empty) while
// the sender was short of window and the session is not shared; while it
// is shared, it grants only up to sharedWindow beyond what the reader
// took. Either way what stays granted beyond what was taken is, once a
// credit is due, at least half of sharedWindow, so that a sender is never
// left without window by a reader that has taken everything. Caller holds
// the stream's lock.
func (w *recvWindow) credit(empty bool, s *Session) uint32 {
	target := w.window
	if s.recvShared() {
		w.giveBack(s)
		target = sharedWindow
	} else if empty && w.granted-w.received < w.window/4 && w.window < uint64(s.cfg.maxWindow) {
		grow := min(w.window, uint64(s.cfg.maxWindow)-w.window)
		if s.growth.Add(-int64(grow)) >= 0 {
			w.window += grow
		} else {
			s.growth.Add(int64(grow))
		}
		target = w.window
	}
	want := w.taken + target
	if want <= w.granted || want-w.granted < target/2 {
		return 0
	}
	inc := min(want-w.granted, 1<<32-1)
	w.granted += inc
	return uint32(inc)
}

// giveBack returns the window's growth to the session's budget.
func (w *recvWindow) giveBack(s *Session) {
	if w.window > MinStreamWindow {
		s.growth.Add(int64(w.window - MinStreamWindow))
		w.window = MinStreamWindow
	}
}

// sendWindow is what the peer lets this end send on a stream.
type sendWindow struct {
	limit uint64 // the initial window and every credit received
	spent uint64 // charges sent
}

func (w *sendWindow) init() { w.limit = MinStreamWindow }

// room is how many data bytes one frame may carry now: 0 when only an
// empty frame's charge fits, -1 when not even that does.
func (w *sendWindow) room() int {
	avail := w.limit - w.spent
	if avail < frameCharge {
		return -1
	}
	return int(min(avail-frameCharge, 1<<31))
}

// credit adds a credit's increment, or fails if the direction's total
// would pass the protocol's bound.
func (w *sendWindow) credit(incr uint32, id uint32) error {
	if w.limit+uint64(incr) >= windowTotalLimit {
		return fmt.Errorf("%w: credit for stream %d beyond 2^62 bytes", ErrProtocol, id)
	}
	w.limit += uint64(incr)
	return nil
}

// recvShared reports whether several of the session's streams have been
// receiving data lately.
func (s *Session) recvShared() bool {
	return time.Now().UnixNano() < s.recvSharedUntil.Load()
}

// noteRecv records which stream the read loop gave data to (the read
// loop only). The session's first stream shares with nobody, and nor does
// one that follows a stream whose direction has ended (endedRecv): a bulk
// stream that starts after another finished runs alone at once.
func (s *Session) noteRecv(id uint32) {
	if last := s.lastRecvID.Swap(id); last != id && last != 0 {
		s.recvSharedUntil.Store(time.Now().Add(sharedFor).UnixNano())
	}
}

// sendShared reports whether several of the session's streams have been
// sending data lately.
func (s *Session) sendShared() bool {
	return time.Now().UnixNano() < s.sendSharedUntil.Load()
}

// noteSend records which stream sent data. As for noteRecv, the session's
// first stream shares with nobody, nor one that follows a stream whose
// direction has ended (endedSend).
func (s *Session) noteSend(id uint32) {
	if last := s.lastSendID.Swap(id); last != id && last != 0 {
		s.sendSharedUntil.Store(time.Now().Add(sharedFor).UnixNano())
	}
}

// endedRecv and endedSend forget stream id as the last to receive or send
// data, once that direction of it has ended (its end, or a reset): it
// takes no more turns.
func (s *Session) endedRecv(id uint32) { s.lastRecvID.CompareAndSwap(id, 0) }
func (s *Session) endedSend(id uint32) { s.lastSendID.CompareAndSwap(id, 0) }
