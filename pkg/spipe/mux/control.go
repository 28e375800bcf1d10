package mux

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/spipe-dev/spipe/pkg/spipe/frame"
	"github.com/spipe-dev/spipe/pkg/spipe/internal/carrier"
	"github.com/spipe-dev/spipe/pkg/spipe/internal/pool"
)

// The frames a session sends on its own account, not a writer's: credit
// (from readers), resets (from Reset and Close, and refusals), pings and
// pongs, go-away and the carrier's close-write. They are queued without
// waiting, and one goroutine per session writes them, several to one
// write, so that neither the read loop nor a stream's Close ever waits
// for the carrier's write side.

// ctlType is the kind of a queued control frame.
type ctlType uint8

const (
	resetItem ctlType = iota
	creditItem
	pingItem
	pongItem
	goAwayItem
	closeWriteItem // the carrier's close-write: always last, nothing after it
)

// control1 is one queued control frame.
type control1 struct {
	typ ctlType
	f   streamFrame
}

// maxControlBacklog bounds the control frames the read loop lets wait:
// once this many wait (a peer opening streams faster than their refusals
// can go out, say), the read loop stops reading until the writer has
// caught up, so the peer's own frames wait in its socket rather than
// their answers in memory. (A peer that stops reading meanwhile stops
// answering pings, and the session ends.)
const maxControlBacklog = 4096

type control struct {
	mu      sync.Mutex
	items   []control1
	pong    bool   // a pong is owed
	pongVal uint64 // for the last ping
	wake    chan struct{}
	drained chan struct{} // signals the read loop that the backlog went down
	// Closed once the go-away, and the close-write, have been written.
	goAwaySent, endSent chan struct{}
}

func (c *control) init() {
	c.wake = make(chan struct{}, 1)
	c.drained = make(chan struct{}, 1)
	c.goAwaySent = make(chan struct{})
	c.endSent = make(chan struct{})
}

// queue adds a control frame, without waiting.
func (c *control) queue(it control1) {
	c.mu.Lock()
	c.items = append(c.items, it)
	c.mu.Unlock()
	wake(c.wake)
}

// backlogged reports whether maxControlBacklog frames or more wait.
func (c *control) backlogged() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items) >= maxControlBacklog
}

// waitDrained returns once fewer than maxControlBacklog frames wait, or
// done closes (the read loop, when backlogged).
func (c *control) waitDrained(done <-chan struct{}) {
	for c.backlogged() {
		select {
		case <-c.drained:
		case <-done:
			return
		}
	}
}

// queuePong owes a pong for a ping: only the last ping's is owed when
// several arrive before one goes out (docs/PROTOCOL.md 7.5).
func (c *control) queuePong(v uint64) {
	c.mu.Lock()
	c.pong, c.pongVal = true, v
	c.mu.Unlock()
	wake(c.wake)
}

// take moves up to most queued frames (the owed pong first) into batch.
func (c *control) take(batch []control1, most int) []control1 {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer wake(c.drained)
	batch = batch[:0]
	if c.pong {
		batch = append(batch, control1{typ: pongItem, f: streamFrame{opaque: c.pongVal}})
		c.pong = false
	}
	k := min(most-len(batch), len(c.items))
	batch = append(batch, c.items[:k]...)
	c.items = append(c.items[:0], c.items[k:]...)
	return batch
}

// frameOf is the frame a queued item sends.
func (it *control1) frame() streamFrame {
	f := it.f
	switch it.typ {
	case resetItem:
		f.typ = frame.StreamReset
	case creditItem:
		f.typ = frame.StreamCredit
	case pingItem:
		f.typ = frame.Ping
	case pongItem:
		f.typ = frame.Pong
	case goAwayItem:
		f.typ = frame.GoAway
	case closeWriteItem:
		f.typ = frame.CloseWrite
	}
	return f
}

// controlLoop writes queued control frames until the session ends.
func (s *Session) controlLoop() {
	// A batch fits one small buffer: 64 KiB of frames, or one frame when
	// padding makes each larger than that.
	per := s.frames.FrameLen(frame.Pong.FieldSize())
	most := min(64, max(1, smallPayload/per))
	bp := pool.Get(most * per)
	defer pool.Put(bp)
	batch := make([]control1, 0, most)
	staged := make([]carrier.Staged, 0, most)
	for {
		select {
		case <-s.ctl.wake:
		case <-s.done:
			return
		}
		for {
			if batch = s.ctl.take(batch, most); len(batch) == 0 {
				break
			}
			if err := s.writeControl(*bp, batch, staged); err != nil {
				if !errors.Is(err, ErrSessionClosed) {
					s.writeFailed(err)
				}
				return
			}
		}
	}
}

// writeControl writes one batch: the frames before a close-write in one
// write, then the close-write.
func (s *Session) writeControl(buf []byte, batch []control1, staged []carrier.Staged) error {
	if err := s.acquire(nil); err != nil {
		return err
	}
	defer s.release()
	if s.wclosed {
		return nil
	}
	staged = staged[:0]
	off, goAway, end := 0, false, false
	for i := range batch {
		f := batch[i].frame()
		switch f.typ {
		case frame.CloseWrite:
			end = true
			continue
		case frame.GoAway:
			goAway = true
		}
		n := putFields(buf[off+s.off:], &f)
		staged = append(staged, carrier.Staged{Type: f.typ, Off: off, Body: n})
		off += s.frames.FrameLen(n)
	}
	if len(staged) > 0 {
		if err := s.frames.Send(buf, staged); err != nil {
			return err
		}
	}
	if goAway {
		close(s.ctl.goAwaySent)
	}
	if end {
		s.wclosed = true
		if err := s.frames.CloseWrite(); err != nil {
			return err
		}
		// The peer has closeFlush to answer with its own close-write
		// (docs/PROTOCOL.md 7.4); the read loop ends then at the latest.
		_ = s.conn.SetReadDeadline(time.Now().Add(closeFlush))
		close(s.ctl.endSent)
	}
	return nil
}

// acquire takes the carrier's write token, waiting at most until dl (nil:
// no deadline) or the session's end.
func (s *Session) acquire(dl <-chan struct{}) error {
	select {
	case s.wtok <- struct{}{}:
		return nil
	default:
	}
	select {
	case s.wtok <- struct{}{}:
		return nil
	case <-dl:
		return fmt.Errorf("spipe/mux: write: %w", os.ErrDeadlineExceeded)
	case <-s.done:
		return s.sessionErr()
	}
}

func (s *Session) release() { <-s.wtok }

// writeFailed ends the session after a write to the carrier failed. A
// write that failed because this process closed the socket is seldom the
// cause: the session's end closed it, or the record layer did on a frame
// that failed (spipe.Conn closes the socket then), and the read loop,
// which the close wakes, ends the session with that frame's error. So
// that error gets closedWriteGrace to come first; were the write's to
// win, a tampered carrier would be reported as "use of closed network
// connection".
func (s *Session) writeFailed(err error) {
	if s.closing.Load() {
		err = nil
	}
	if err == nil || !errors.Is(err, net.ErrClosed) {
		go s.end(err)
		return
	}
	go func() {
		t := time.NewTimer(closedWriteGrace)
		defer t.Stop()
		select {
		case <-s.done:
		case <-t.C:
			s.end(err)
		}
	}()
}

// closedWriteGrace is how long a session whose write found its socket
// closed by this process waits for the read loop to end it with the
// cause, before it ends with the write's error.
const closedWriteGrace = time.Second
