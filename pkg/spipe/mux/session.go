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

	"github.com/libp2p/go-yamux/v5"

	"github.com/spipe-dev/spipe/pkg/spipe"
)

// Defaults of a Config that sets nothing.
const (
	// DefaultMaxStreams is how many streams a session accepts open at
	// once by default.
	DefaultMaxStreams = 1000
	// MinStreamWindow is the receive window every stream starts with (the
	// yamux specification's), and the smallest MaxStreamWindow.
	MinStreamWindow = 256 << 10
	// DefaultKeepAlive is how often an idle session pings its peer by
	// default.
	DefaultKeepAlive = 30 * time.Second
)

// closeFlush bounds how long Close waits for what the session has queued
// (the last stream's end above all) to be written, and then for the peer
// to close its end.
const closeFlush = 2 * time.Second

// Config tunes a session. Nothing in it must match the peer's: each side
// limits only what it accepts. The zero value (or nil) is the defaults.
type Config struct {
	// MaxStreams caps the streams a server accepts open at once; one the
	// client opens beyond it is reset at once. 0 means DefaultMaxStreams.
	// (A client accepts no stream: one a server opens is reset.) Each stream may buffer up to its window
	// unread, so MaxStreams times MaxStreamWindow bounds the memory a peer
	// can make a session hold.
	MaxStreams int

	// MaxStreamWindow is the most one stream may buffer unread on this
	// side: its receive window starts at MinStreamWindow (256 KiB) and
	// grows up to this while the reader keeps up and the round trip is
	// long, so a stream can fill a long fat link. 0 means
	// MinStreamWindow (no growth): the smallest queue for other streams'
	// data to wait behind, which is what keeps interactive streams
	// responsive beside a bulk one on a fast link.
	MaxStreamWindow int

	// KeepAlive is how often a session pings its peer when nothing
	// arrives; a ping unanswered within 10 s ends the session (a dead
	// carrier is noticed and its streams fail). 0 means DefaultKeepAlive;
	// negative turns the pings off.
	KeepAlive time.Duration
}

// Session is one end of a multiplexed spipe connection: the client opens
// streams (Open), the server accepts them (Accept). A Session is a
// net.Listener of the streams its peer opens. Its methods are safe for
// concurrent use.
type Session struct {
	y       *yamux.Session
	carrier *carrier
	client  bool
	msgData int        // data bytes one message holds
	queue   *sendQueue // data queued in the library

	closing atomic.Bool   // Close was called
	done    chan struct{} // closed once the session has ended
	err     error         // why it ended; set before done closes
}

// Client returns the client end of a session over conn, running conn's
// handshake first if it has not run. The handshake must have negotiated
// the multiplexed mode (ErrNotMultiplexed otherwise). The Session owns
// conn from now on.
func Client(conn *spipe.Conn, config *Config) (*Session, error) {
	return newSession(conn, config, true)
}

// Server returns the server end of a session over conn, running conn's
// handshake first if it has not run (so it returns only once the client
// has proven its key). The handshake must have negotiated the
// multiplexed mode (ErrNotMultiplexed otherwise; a server that also
// serves plain clients checks conn.ConnectionState().Multiplexed first).
// The Session owns conn from now on.
func Server(conn *spipe.Conn, config *Config) (*Session, error) {
	return newSession(conn, config, false)
}

func newSession(conn *spipe.Conn, config *Config, client bool) (*Session, error) {
	if err := conn.Handshake(); err != nil {
		return nil, err
	}
	st := conn.ConnectionState()
	if !st.Multiplexed {
		conn.Close()
		return nil, ErrNotMultiplexed
	}
	yc, err := yamuxConfig(config, st.MaxPayload, client)
	if err != nil {
		conn.Close()
		return nil, err
	}
	limitNotSent(conn.NetConn())
	q := newSendQueue()
	c := newCarrier(conn, q)
	if testOnWrite != nil {
		c.onWrite = testOnWrite(client)
	}
	var y *yamux.Session
	if client {
		y, err = yamux.Client(c, yc, nil)
	} else {
		y, err = yamux.Server(c, yc, nil)
	}
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("spipe/mux: %w", err)
	}
	s := &Session{y: y, carrier: c, client: client, msgData: int(yc.MaxMessageSize) - yamuxHeader, queue: q,
		done: make(chan struct{})}
	go s.watch()
	return s, nil
}

// testOnWrite, set by tests only, gives each new carrier a function that
// sees every message it writes.
var testOnWrite func(client bool) func(p []byte)

// yamuxConfig is the library's configuration for config on a carrier
// whose frames hold maxPayload bytes.
func yamuxConfig(config *Config, maxPayload int, client bool) (*yamux.Config, error) {
	if config == nil {
		config = &Config{}
	}
	yc := yamux.DefaultConfig()
	yc.LogOutput = io.Discard // failures reach the caller as errors
	switch {
	case config.MaxStreams < 0:
		return nil, fmt.Errorf("spipe/mux: MaxStreams %d is negative", config.MaxStreams)
	case config.MaxStreams > 0:
		yc.MaxIncomingStreams = uint32(config.MaxStreams)
	default:
		yc.MaxIncomingStreams = DefaultMaxStreams
	}
	if client {
		// Only the client opens streams (docs/PROTOCOL.md 7.1): the
		// library resets any stream a server opens.
		yc.MaxIncomingStreams = 0
	}
	switch {
	case config.MaxStreamWindow == 0:
		yc.MaxStreamWindowSize = MinStreamWindow
	case config.MaxStreamWindow < MinStreamWindow || config.MaxStreamWindow > 1<<30:
		return nil, fmt.Errorf("spipe/mux: MaxStreamWindow %d outside %d..%d", config.MaxStreamWindow, MinStreamWindow, 1<<30)
	default:
		yc.MaxStreamWindowSize = uint32(config.MaxStreamWindow)
	}
	switch {
	case config.KeepAlive < 0:
		yc.EnableKeepAlive = false
	case config.KeepAlive > 0:
		yc.KeepAliveInterval = config.KeepAlive
	default:
		yc.KeepAliveInterval = DefaultKeepAlive
	}
	// One yamux message per spipe frame: a message the frame cannot hold
	// would cost a second frame (and a second write) for its tail. The
	// frame holds MaxPayload-1 bytes (one goes to its type).
	yc.MaxMessageSize = uint32(max(maxPayload-1, 1024))
	return yc, nil
}

// watch waits for the session to end, then records why and releases
// writers waiting for the queue.
func (s *Session) watch() {
	<-s.y.CloseChan()
	// Once the session is over the library's Accept returns why, after
	// any streams still waiting in its backlog, which are reset.
	var err error
	for {
		var ys *yamux.Stream
		if ys, err = s.y.AcceptStream(); err != nil {
			break
		}
		ys.Reset()
	}
	s.err = s.cause(err)
	s.queue.close()
	close(s.done)
}

// cause turns the library's reason for ending the session into Err's.
func (s *Session) cause(err error) error {
	var ga *yamux.GoAwayError
	switch {
	case errors.As(err, &ga) && ga.ErrorCode == 0:
		// Closed on purpose: by Close, or by the peer's (its GoAway).
		return nil
	case errors.As(err, &ga):
		return fmt.Errorf("%w: %v", ErrProtocol, err)
	case errors.Is(err, io.EOF):
		// The carrier's authenticated end: the peer closed it cleanly.
		return nil
	case errors.Is(err, yamux.ErrKeepAliveTimeout), errors.Is(err, yamux.ErrConnectionWriteTimeout):
		return fmt.Errorf("spipe/mux: carrier unresponsive (%v): %w", err, os.ErrDeadlineExceeded)
	}
	ioErr := s.carrier.ioErr()
	switch {
	case ioErr != nil && s.closing.Load():
		return nil // the close cut the carrier's I/O short
	case !s.carrier.returned(err):
		// The library's own verdict on what the peer sent (a bad version
		// or type, a window overrun, a stream opened twice or with a
		// server's id): the carrier's I/O was fine up to it, and an I/O
		// error noted since (the library closes the carrier while its
		// GoAway may still be going out) is the consequence.
		return fmt.Errorf("%w: %v", ErrProtocol, err)
	case ioErr != nil:
		return ioErr
	}
	return fmt.Errorf("%w: %v", ErrProtocol, err)
}

// Open opens a stream to the server (a client's session only). It costs
// no round trip: the stream's open is queued at once and its first data
// follows right behind it, before the server has answered. ctx bounds
// the wait when the server has not yet answered many opens (the yamux
// accept backlog, 256). The net.Conn is a *Stream. Once the session has
// ended Open fails with ErrSessionClosed; an error without it means the
// session lives on but can open no more streams (a client then opens
// another session).
func (s *Session) Open(ctx context.Context) (net.Conn, error) {
	if !s.client {
		return nil, errOnlyClient
	}
	ys, err := s.y.OpenStream(ctx)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, err
	case s.y.IsClosed():
		// The library marks the session closed before it fails anything
		// because of that.
		return nil, s.sessionErr(err)
	default:
		// The session lives on but opens no more streams: its stream
		// ids ran out (after some 2^31 streams).
		return nil, fmt.Errorf("spipe/mux: this session can open no more streams (%v)", err)
	}
	return newStream(s, ys), nil
}

// Accept waits for the next stream the client opens (a server's session;
// on a client, whose peer may open none, it waits until the session
// ends) and returns it as a *Stream. Once the session has ended it
// returns an error wrapping ErrSessionClosed.
func (s *Session) Accept() (net.Conn, error) {
	ys, err := s.y.AcceptStream()
	if err != nil {
		<-s.done
		return nil, s.sessionErr(nil)
	}
	return newStream(s, ys), nil
}

// Addr returns the carrier's local address (net.Listener).
func (s *Session) Addr() net.Addr { return s.carrier.LocalAddr() }

// RemoteAddr returns the carrier's remote address.
func (s *Session) RemoteAddr() net.Addr { return s.carrier.RemoteAddr() }

// NumStreams returns how many streams are open: not yet ended in both
// directions, or reset.
func (s *Session) NumStreams() int { return s.y.NumStreams() }

// Done returns a channel that is closed once the session has ended: its
// carrier closed or failed, or Close was called.
func (s *Session) Done() <-chan struct{} { return s.done }

// Err returns nil while the session runs and once it has ended cleanly
// (Close on either side, or the carrier's authenticated end); otherwise
// why it ended: the carrier's error (wrapping the spipe sentinels,
// ErrTampered, ErrTruncated, ...), ErrProtocol, or a timeout
// (os.ErrDeadlineExceeded) when the peer stopped answering.
func (s *Session) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// Close ends the session. What was already written on it, the ends of
// streams above all, is sent first (Close waits up to 2 s for that); then
// the peer is told the session is over, and every stream that has not
// ended in both directions is reset at both ends. Close returns once the
// session has ended; calling it again does nothing.
func (s *Session) Close() error {
	if !s.closing.CompareAndSwap(false, true) {
		<-s.done
		return nil
	}
	if !s.y.IsClosed() {
		// The GoAway goes through the library's queue behind everything
		// written before it; once it is on the carrier, so is the rest.
		// Then the carrier gets its authenticated end and waits for the
		// peer, which closes on the GoAway, so nothing still in flight is
		// cut by a reset of the socket.
		written := s.carrier.expectGoAway()
		if s.y.GoAway() == nil {
			t := time.NewTimer(closeFlush)
			select {
			case <-written:
				s.carrier.drainOnClose(closeFlush)
			case <-t.C:
			case <-s.y.CloseChan():
			}
			t.Stop()
		}
	}
	s.y.Close()
	<-s.done
	return nil
}

// sessionErr is the error of a stream operation that failed because the
// session ended (err is the library's, if any).
func (s *Session) sessionErr(err error) error {
	select {
	case <-s.done:
		if s.err != nil {
			return fmt.Errorf("%w (%v)", ErrSessionClosed, s.err)
		}
		return ErrSessionClosed
	default:
	}
	if err == nil {
		return ErrSessionClosed
	}
	return fmt.Errorf("%w (%v)", ErrSessionClosed, err)
}

var _ net.Listener = (*Session)(nil)

// carrier is the spipe connection as the library sees it. It records the
// first I/O error (why the session ended, if it failed), tells Close when
// the GoAway has been written, and for a deliberate close sends the
// authenticated close-write and lets the peer close first.
type carrier struct {
	*spipe.Conn

	mu       sync.Mutex
	readErr  error         // the read error that ended reading
	writeErr error         // the first write error
	closeErr error         // the first error that says only "closed"
	goAway   chan struct{} // closed when the GoAway is written; nil: not expected
	drain    bool          // Close half-closes and waits for the peer
	readDone bool          // reading has ended (the library's reader has quit)
	closed   bool

	queue   *sendQueue
	onWrite func(p []byte) // tests: sees each message written
}

func newCarrier(c *spipe.Conn, q *sendQueue) *carrier { return &carrier{Conn: c, queue: q} }

func (c *carrier) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		c.mu.Lock()
		c.note(&c.readErr, err)
		c.readDone = true
		closeNow := c.drain && !c.closed
		c.closed = c.closed || closeNow
		c.mu.Unlock()
		if closeNow {
			c.Conn.Close()
		}
	}
	return n, err
}

// The library writes each message with one Write: a 12-byte header, then
// a data message's data. A GoAway is a header of type 3 alone.
const (
	yamuxHeader = 12
	goAwayType  = 3
)

func (c *carrier) Write(p []byte) (int, error) {
	if c.onWrite != nil {
		c.onWrite(p)
	}
	n, err := c.Conn.Write(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && len(p) > yamuxHeader && p[1] == 0 {
		c.queue.sent(len(p) - yamuxHeader)
	}
	if err != nil {
		c.note(&c.writeErr, err)
	} else if c.goAway != nil && len(p) == yamuxHeader && p[0] == 0 && p[1] == goAwayType {
		close(c.goAway)
		c.goAway = nil
	}
	return n, err
}

// note records err in *slot unless one is there, or err only says the
// connection was closed: that is the consequence of a failure (spipe
// closes the connection when a read fails, the library closes it when a
// write fails), not its cause. c.mu is held.
func (c *carrier) note(slot *error, err error) {
	switch {
	case errors.Is(err, net.ErrClosed):
		if c.closeErr == nil {
			c.closeErr = err
		}
	case *slot == nil:
		*slot = err
	}
}

// returned reports whether err is one the carrier's I/O returned to the
// library (which passes those on as they are): its read or write error,
// or one that says it was closed.
func (c *carrier) returned(err error) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return errors.Is(err, net.ErrClosed) ||
		c.readErr != nil && errors.Is(err, c.readErr) ||
		c.writeErr != nil && errors.Is(err, c.writeErr)
}

// ioErr is why the carrier failed, if it did: its read error first (a
// write failing at the same time fails because of it), then its write
// error, then an error that only says it was closed.
func (c *carrier) ioErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, err := range []error{c.readErr, c.writeErr, c.closeErr} {
		if err != nil {
			return err
		}
	}
	return nil
}

// expectGoAway returns a channel closed once a GoAway is written.
func (c *carrier) expectGoAway() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.goAway = make(chan struct{})
	return c.goAway
}

// drainOnClose makes Close end the carrier gracefully: close-write now,
// the socket once the peer has closed its end (or after wait).
func (c *carrier) drainOnClose(wait time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drain = true
	_ = c.Conn.SetReadDeadline(time.Now().Add(wait))
}

// Close is called by the library once, as the session ends.
func (c *carrier) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	if !c.drain || c.writeErr != nil || c.readDone {
		c.closed = true
		c.mu.Unlock()
		return c.Conn.Close()
	}
	c.mu.Unlock()
	// The reader is still running: it closes the socket when the peer
	// closes its end or the read deadline passes.
	_ = c.Conn.CloseWrite()
	return nil
}
