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

// recvWindow is what this end lets the peer send on a stream.
type recvWindow struct {
	granted  uint64 // the initial window and every credit sent
	received uint64 // charges received
	taken    uint64 // charges the reader has taken (so they may be granted again)
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

// take counts n data bytes read by the stream's reader and returns the
// credit to send, if one is due: once what the reader took since the last
// credit is half the window (a bulk stream's credit then costs one frame
// each way per half window, while the other half keeps it moving). When the reader has emptied the
// buffer (empty), every frame's charge is taken too. The window grows
// (doubling, up to the session's MaxStreamWindow, within its growth
// budget) when the reader has emptied the buffer while the sender was
// short of window and the session is not shared; while it is shared, it
// grants only up to sharedWindow beyond what the reader took. Caller
// holds the stream's lock.
func (w *recvWindow) take(n int, empty bool, s *Session) uint32 {
	w.taken += uint64(n)
	if empty {
		w.taken = w.received
	}
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
// loop only). The session's first stream shares with nobody.
func (s *Session) noteRecv(id uint32) {
	if id != s.lastRecvID {
		if s.lastRecvID != 0 {
			s.recvSharedUntil.Store(time.Now().Add(sharedFor).UnixNano())
		}
		s.lastRecvID = id
	}
}

// sendShared reports whether several of the session's streams have been
// sending data lately.
func (s *Session) sendShared() bool {
	return time.Now().UnixNano() < s.sendSharedUntil.Load()
}

// noteSend records which stream sent data. The session's first stream
// shares with nobody.
func (s *Session) noteSend(id uint32) {
	if last := s.lastSendID.Swap(id); last != id && last != 0 {
		s.sendSharedUntil.Store(time.Now().Add(sharedFor).UnixNano())
	}
}
