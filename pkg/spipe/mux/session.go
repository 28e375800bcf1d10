package mux

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spipe-dev/spipe/pkg/spipe"
	"github.com/spipe-dev/spipe/pkg/spipe/internal/carrier"
)

// closeFlush bounds how long Close waits for its last frames to go out,
// and then for the peer to end its side of the carrier.
const closeFlush = 2 * time.Second

// Session is one end of a multiplexed spipe connection: the client opens
// streams (Open), the server accepts them (Accept). A Session is a
// net.Listener of the streams its peer opens. Its methods are safe for
// concurrent use.
//
// Each stream's writer seals and writes its own frames on the carrier,
// taking turns with the other streams' writers; one goroutine reads the
// carrier and hands each frame's data to its stream's buffer, where the
// stream's reader takes it. Frames the session sends on its own (credit,
// resets, pongs, go-away) go out from a second goroutine, so that reading
// never waits for the carrier's write side.
type Session struct {
	conn   *spipe.Conn
	frames carrier.Frames
	client bool
	cfg    settings
	off    int // where a frame's body starts in a send buffer
	// maxBody is the largest body one frame may carry toward the peer.
	maxBody int

	// wtok is the carrier's write side: held while a frame is sealed and
	// written, so frames leave whole and in counter order. A channel, not
	// a mutex, so that a writer can give up waiting at its deadline.
	wtok    chan struct{}
	wclosed bool // close-write sent: nothing more may be; wtok is held

	ctl control
	ka  keepalive

	mu        sync.Mutex
	streams   map[uint32]*Stream // announced and not closed at the protocol level
	accepting []*Stream          // a server's streams waiting for Accept
	acceptNew chan struct{}      // signals accepting (capacity 1)
	// highest is a client's last opened stream id, a server's last id an
	// open arrived for: a frame for a higher id is a protocol error.
	highest    uint32
	goAwaySent bool
	goAwayRecv bool
	lastServed uint32 // a server's last stream id after its go-away
	peerCode   byte   // the code of the peer's go-away
	endQueued  bool   // the carrier's close-write is queued
	goingAway  chan struct{}

	// growth is how much more the windows of the session's streams may
	// grow beyond MinStreamWindow.
	growth atomic.Int64
	// held counts the streams holding a place (Stream.placed).
	held atomic.Int64
	// Whether several streams take turns, on the receiving side (the
	// last stream the read loop gave data to, and until when the session
	// counts as shared) and on the sending side. A last stream whose
	// direction has ended is forgotten (0), so that the stream after it
	// shares with nobody.
	lastRecvID      atomic.Uint32
	recvSharedUntil atomic.Int64 // unix nanoseconds
	// The read loop's run of frames already buffered: while batching,
	// data for streams whose WriteTo writes directly is gathered, and
	// dirty lists those streams, flushed once the run ends.
	batching        bool
	dirty           []*Stream
	lastSendID      atomic.Uint32
	sendSharedUntil atomic.Int64

	closing   atomic.Bool // Close was called
	readDone  chan struct{}
	done      chan struct{} // closed once the session has ended
	err       error         // why; set before done closes
	endOnce   sync.Once
	closeOnce sync.Once
}

// Client returns the client end of a session over conn, running conn's
// handshake first if it has not run. The handshake must have negotiated
// the multiplexed mode (ErrNotMultiplexed otherwise). The Session owns
// conn from now on; a nil conn is an error.
func Client(conn *spipe.Conn, config *Config) (*Session, error) {
	return newSession(conn, config, true)
}

// Server returns the server end of a session over conn, running conn's
// handshake first if it has not run (so it returns only once the client
// has proven its key). The handshake must have negotiated the
// multiplexed mode (ErrNotMultiplexed otherwise; a server that also
// serves plain clients checks conn.ConnectionState().Multiplexed first).
// The Session owns conn from now on; a nil conn is an error.
func Server(conn *spipe.Conn, config *Config) (*Session, error) {
	return newSession(conn, config, false)
}

func newSession(conn *spipe.Conn, config *Config, client bool) (*Session, error) {
	if conn == nil {
		return nil, errors.New("spipe/mux: nil connection")
	}
	cfg, err := config.settings()
	if err != nil {
		conn.Close()
		return nil, err
	}
	if err := conn.Handshake(); err != nil {
		return nil, err
	}
	if !conn.ConnectionState().Multiplexed {
		conn.Close()
		return nil, ErrNotMultiplexed
	}
	frames, err := carrier.Of(conn)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("spipe/mux: %w", err)
	}
	s := &Session{
		conn: conn, frames: frames, client: client, cfg: cfg,
		off: frames.DataOffset(), maxBody: frames.MaxBody(),
		wtok:      make(chan struct{}, 1),
		streams:   make(map[uint32]*Stream),
		acceptNew: make(chan struct{}, 1),
		goingAway: make(chan struct{}),
		readDone:  make(chan struct{}),
		done:      make(chan struct{}),
	}
	s.growth.Store(cfg.growthBudget)
	s.ctl.init()
	go s.readLoop()
	go s.controlLoop()
	s.ka.start(s)
	return s, nil
}

// Open opens a stream to the server (a client's session only). It costs
// no round trip and never waits: the stream's open goes out with its
// first data (its first Write, or ReadFrom's first read), or alone as
// soon as the stream is read from or half-closed, without waiting for
// the server. The net.Conn is a *Stream. ctx must not be nil; opening
// does not wait, so it only fails if ctx is already done. Once the
// session has ended Open fails with ErrSessionClosed, and once either
// end has said go-away, with ErrGoAway.
func (s *Session) Open(ctx context.Context) (net.Conn, error) {
	if ctx == nil {
		return nil, errors.New("spipe/mux: Open with a nil context")
	}
	if !s.client {
		return nil, errOnlyClient
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.ended():
		return nil, s.sessionErr()
	case s.goAwaySent || s.goAwayRecv:
		return nil, ErrGoAway
	case s.highest == maxStreamID:
		return nil, errIDsExhausted
	}
	s.held.Add(1)
	return newStream(s, 0), nil
}

// Accept waits for the next stream the client opens (a server's session;
// on a client, whose peer opens none, it waits until the session ends)
// and returns it as a *Stream. Once the session has ended, and every
// stream opened before has been accepted, it returns an error wrapping
// ErrSessionClosed.
func (s *Session) Accept() (net.Conn, error) {
	for {
		s.mu.Lock()
		if len(s.accepting) > 0 {
			st := s.accepting[0]
			s.accepting[0] = nil
			s.accepting = s.accepting[1:]
			s.mu.Unlock()
			if st.takeAccepted() {
				return st, nil
			}
			continue
		}
		s.mu.Unlock()
		select {
		case <-s.acceptNew:
		case <-s.done:
			s.mu.Lock()
			n := len(s.accepting)
			s.mu.Unlock()
			if n == 0 {
				return nil, s.sessionErr()
			}
		}
	}
}

// GoAway tells the peer that this end takes (a server) or opens (a
// client) no new streams on this session; the streams already open carry
// on in both directions. A server's go-away names the last stream it
// serves: opens that cross it on the wire are ignored, and the client
// counts them as refused. Once no stream is open any more, the session
// ends cleanly. Open then fails with ErrGoAway. Calling it again, or
// after the peer's go-away, does nothing more.
func (s *Session) GoAway() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended() {
		return s.sessionErr()
	}
	s.sendGoAwayLocked(goAwayNoError)
	s.maybeEndLocked()
	return nil
}

// GoingAway returns a channel that is closed once either end has sent
// go-away (GoAway, Close, or a protocol error), or the peer ended its side
// of the carrier: the session opens or accepts no new streams, and ends
// once its open streams have. (A session that fails closes only Done.)
func (s *Session) GoingAway() <-chan struct{} { return s.goingAway }

// sendGoAwayLocked queues this end's go-away, once. s.mu is held.
func (s *Session) sendGoAwayLocked(code byte) {
	if s.goAwaySent {
		return
	}
	s.goAwaySent = true
	last := uint32(0)
	if !s.client {
		last = s.highest
		s.lastServed = last
	}
	s.ctl.queue(control1{typ: goAwayItem, f: streamFrame{id: last, code: code}})
	s.markGoingAwayLocked()
}

func (s *Session) markGoingAwayLocked() {
	select {
	case <-s.goingAway:
	default:
		close(s.goingAway)
	}
}

// maybeEndLocked queues the carrier's close-write once go-away was sent
// or received and no stream is open (docs/PROTOCOL.md 7.4). s.mu is
// held.
func (s *Session) maybeEndLocked() {
	if s.endQueued || !(s.goAwaySent || s.goAwayRecv) || len(s.streams) > 0 {
		return
	}
	s.endQueued = true
	s.ctl.queue(control1{typ: closeWriteItem})
}

// Addr returns the carrier's local address (net.Listener).
func (s *Session) Addr() net.Addr { return s.conn.LocalAddr() }

// RemoteAddr returns the carrier's remote address.
func (s *Session) RemoteAddr() net.Addr { return s.conn.RemoteAddr() }

// NumStreams returns how many streams hold a place: opened and not yet
// closed with their data read, nor reset.
func (s *Session) NumStreams() int {
	return int(s.held.Load())
}

// Done returns a channel that is closed once the session has ended: its
// carrier closed or failed, or Close was called. By then every stream
// still open has been reset: its Read and Write return ErrSessionClosed.
func (s *Session) Done() <-chan struct{} { return s.done }

// Err returns nil while the session runs and once it has ended cleanly
// (Close, or go-away on either side and every stream closed); otherwise
// why it ended: the carrier's error (wrapping the spipe sentinels,
// ErrTampered, ErrTruncated, ...), ErrProtocol, or a timeout
// (os.ErrDeadlineExceeded) when the peer stopped answering pings.
func (s *Session) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// ended reports whether the session has ended (or is ending).
func (s *Session) ended() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Close ends the session at once: every stream that has not ended in
// both directions is reset at both ends, the peer is told the session is
// over (go-away, then the carrier's authenticated end), and the carrier
// is closed once the peer has ended its side too, or after 2 s. What was
// written before Close is sent first. Close returns once the session has
// ended; calling it again does nothing.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		s.closing.Store(true)
		s.mu.Lock()
		if !s.ended() {
			for _, st := range s.streams {
				st.abortLocked(resetAborted, net.ErrClosed, true)
			}
			for _, st := range s.accepting {
				st.abortLocked(resetAborted, net.ErrClosed, true)
			}
			s.accepting = nil
			s.sendGoAwayLocked(goAwayNoError)
			s.maybeEndLocked()
		}
		s.mu.Unlock()
		t := time.NewTimer(closeFlush)
		select {
		case <-s.ctl.endSent:
			// The peer answers close-write with its own; the read loop
			// ends then, or closeFlush after it went out.
			select {
			case <-s.readDone:
			case <-t.C:
			}
		case <-s.done:
		case <-t.C:
		}
		t.Stop()
		s.end(nil)
	})
	<-s.done
	return nil
}

// readLoop reads the carrier until it ends, handing each frame to its
// stream or handling it.
func (s *Session) readLoop() {
	defer close(s.readDone)
	for {
		t, body, err := s.frames.ReadFrame()
		if err != nil {
			s.carrierEnded(err)
			return
		}
		s.batching = s.frames.Buffered()
		f, err := parseFrame(t, body)
		if err == nil {
			err = s.dispatch(&f)
		}
		if err != nil {
			s.violation(err)
			return
		}
		if s.ctl.backlogged() {
			s.ctl.waitDrained(s.done)
		}
		if !s.batching && len(s.dirty) > 0 {
			for i, st := range s.dirty {
				st.flushDirect()
				s.dirty[i] = nil
			}
			s.dirty = s.dirty[:0]
		}
	}
}

// carrierEnded handles the end of reading: the peer's close-write (a
// clean end, once this end has sent its own), or a failure.
func (s *Session) carrierEnded(err error) {
	if !errors.Is(err, io.EOF) {
		if s.closing.Load() {
			err = nil // Close cut it short: deliberate
		} else if s.endWritten() && errors.Is(err, os.ErrDeadlineExceeded) {
			// The peer did not answer this end's close-write in time:
			// every stream had closed, so nothing was lost (7.4).
			err = nil
		} else if s.peerGoAwayFailed() {
			err = fmt.Errorf("%w: the peer said so in its go-away (code %d), then: %w", ErrProtocol, s.peerCode, err)
		}
		s.end(err)
		return
	}
	// The peer has sent everything it will: whatever is still open can
	// receive nothing more.
	s.mu.Lock()
	s.goAwayRecv = true
	s.markGoingAwayLocked()
	for _, st := range s.streams {
		st.abortLocked(resetAborted, ErrSessionClosed, false)
	}
	s.maybeEndLocked()
	s.mu.Unlock()
	t := time.NewTimer(closeFlush)
	select {
	case <-s.ctl.endSent:
	case <-s.done:
	case <-t.C:
	}
	t.Stop()
	var cause error
	if s.peerGoAwayFailed() {
		cause = fmt.Errorf("%w: the peer said so in its go-away (code %d)", ErrProtocol, s.peerCode)
	}
	s.end(cause)
}

// endWritten reports whether this end's close-write has gone out.
func (s *Session) endWritten() bool {
	select {
	case <-s.ctl.endSent:
		return true
	default:
		return false
	}
}

// peerGoAwayFailed reports whether the peer's go-away said it failed.
func (s *Session) peerGoAwayFailed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.goAwayRecv && s.peerCode != goAwayNoError
}

// violation ends the session because the peer broke the protocol (or,
// for frame errors the parser meets, the record layer's rules): it is
// told, in a go-away, when the stream layer's rules were broken.
func (s *Session) violation(err error) {
	if errors.Is(err, ErrProtocol) {
		s.fail(goAwayProtocolError, err, closeFlush)
		return
	}
	s.end(err)
}

// fail ends the session with err after sending go-away with code (unless
// this end has sent one), waiting at most wait for it to leave before the
// socket closes (docs/PROTOCOL.md 7.4: the carrier has failed; no
// close-write).
func (s *Session) fail(code byte, err error, wait time.Duration) {
	s.mu.Lock()
	s.sendGoAwayLocked(code)
	s.mu.Unlock()
	t := time.NewTimer(wait)
	select {
	case <-s.ctl.goAwaySent:
	case <-s.done:
	case <-t.C:
	}
	t.Stop()
	s.end(err)
}

// end ends the session with err (nil: cleanly): it closes the carrier and
// fails every stream still open.
func (s *Session) end(err error) {
	s.endOnce.Do(func() {
		s.ka.stop()
		s.conn.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		s.err = err
		why := ErrSessionClosed
		if err != nil {
			why = fmt.Errorf("%w: %w", ErrSessionClosed, err)
		}
		// The streams fail before Done closes, so that once it has, no
		// stream returns more data.
		for _, st := range s.streams {
			st.abortLocked(resetAborted, why, false)
		}
		close(s.done)
	})
}

// sessionErr is the error of an operation that failed because the
// session ended.
func (s *Session) sessionErr() error {
	select {
	case <-s.done:
	default:
		return ErrSessionClosed
	}
	if s.err != nil {
		return fmt.Errorf("%w: %w", ErrSessionClosed, s.err)
	}
	return ErrSessionClosed
}

// timeoutErr is the session's error when its peer stopped answering.
func timeoutErr() error {
	return fmt.Errorf("spipe/mux: the peer did not answer a ping within %v: %w", pongWait, os.ErrDeadlineExceeded)
}

var _ net.Listener = (*Session)(nil)
