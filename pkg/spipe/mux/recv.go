package mux

import (
	"fmt"

	"github.com/spipe-dev/spipe/pkg/spipe/frame"
)

// dispatch handles one frame the read loop brought in (docs/PROTOCOL.md
// 7.2 to 7.5). An error is the peer's protocol error: the session ends.
func (s *Session) dispatch(f *streamFrame) error {
	switch f.typ {
	case frame.StreamOpen:
		return s.opened(f)
	case frame.GoAway:
		s.wentAway(f)
		return nil
	case frame.Ping:
		s.ctl.queuePong(f.opaque)
		return nil
	case frame.Pong:
		s.ka.pong(f.opaque)
		return nil
	}
	s.mu.Lock()
	st, err := s.lookupLocked(f.id, f.typ)
	if st == nil {
		s.mu.Unlock()
		return err
	}
	switch f.typ {
	case frame.StreamEnd:
		err = st.peerEndedLocked()
		s.mu.Unlock()
		return err
	case frame.StreamReset:
		why := ErrStreamReset
		if f.code == resetRefused {
			why = errRefused
		}
		st.abortLocked(resetAborted, why, false)
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	switch f.typ {
	case frame.StreamData:
		s.noteRecv(f.id)
		return st.deliver(f.data, f.charge())
	case frame.StreamCredit:
		return st.credited(f.incr)
	}
	return fmt.Errorf("%w: unexpected %s frame", ErrProtocol, f.typ)
}

// lookupLocked finds the open stream a frame is for. A stream that is no
// longer open (closed, or reset by either end) is nil without error:
// frames cross on the wire. So is any id above the last stream id of this
// server's go-away, checked no further (7.4). An id never opened is a
// protocol error. s.mu is held.
func (s *Session) lookupLocked(id uint32, t frame.Type) (*Stream, error) {
	if st := s.streams[id]; st != nil {
		return st, nil
	}
	if s.pastGoAwayLocked(id) {
		return nil, nil
	}
	if id > s.highest {
		return nil, fmt.Errorf("%w: %s frame for stream %d, which was never opened", ErrProtocol, t, id)
	}
	return nil, nil
}

// opened takes a client's open in (a server's read loop): a new stream
// for Accept, with its first data, unless the session refuses it.
func (s *Session) opened(f *streamFrame) error {
	if s.client {
		return fmt.Errorf("%w: the server opened stream %d", ErrProtocol, f.id)
	}
	s.mu.Lock()
	switch {
	case s.goAwayRecv:
		// The client said it opens no more: nothing can have crossed that.
		s.mu.Unlock()
		return fmt.Errorf("%w: stream %d opened after the client's go-away", ErrProtocol, f.id)
	case s.pastGoAwayLocked(f.id):
		// It crossed this end's go-away: ignored, unchecked; the client
		// counts it as refused.
		s.highest = max(s.highest, f.id)
		s.mu.Unlock()
		return nil
	case f.id != s.highest+1:
		s.mu.Unlock()
		return fmt.Errorf("%w: stream %d opened after stream %d", ErrProtocol, f.id, s.highest)
	}
	s.highest = f.id
	switch {
	case s.ended():
		s.mu.Unlock()
		return nil
	case s.held.Load() >= int64(s.cfg.maxStreams):
		s.mu.Unlock()
		s.ctl.queue(control1{typ: resetItem, f: streamFrame{id: f.id, code: resetRefused}})
		return nil
	}
	st := newStream(s, f.id)
	s.held.Add(1)
	s.streams[f.id] = st
	s.accepting = append(s.accepting, st)
	s.mu.Unlock()
	wake(s.acceptNew)
	s.noteRecv(f.id)
	return st.deliver(f.data, f.charge())
}

// pastGoAwayLocked reports whether id is above the last stream id of this
// server's go-away: every frame for such a stream crossed the go-away and
// is ignored (7.4). s.mu is held.
func (s *Session) pastGoAwayLocked(id uint32) bool {
	return !s.client && s.goAwaySent && id > s.lastServed
}

// wentAway takes the peer's go-away in: no new streams; a client counts
// its streams above the server's last stream id as refused. A server
// ignores the last stream id of a client's go-away (7.4).
func (s *Session) wentAway(f *streamFrame) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.goAwayRecv {
		return
	}
	s.goAwayRecv = true
	s.peerCode = f.code
	if s.client {
		for id, st := range s.streams {
			if id > f.id {
				st.abortLocked(resetAborted, errRefused, false)
			}
		}
	}
	s.markGoingAwayLocked()
	s.maybeEndLocked()
}
