// Package engine forwards connections for the spipe tool: it accepts,
// runs the handshake, dials the target and copies both ways with
// half-close propagation, under connection limits, timeouts, graceful
// shutdown and metrics. It knows the protocol only through the Inbound and
// Outbound functions it is given, so the same engine serves both
// "spipe listen" (decrypt, then dial plaintext) and "spipe connect"
// (accept plaintext, then dial and encrypt).
package engine

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"
)

// Forwarder moves connections from a listener to a target. The zero value
// is not usable: Outbound must be set.
type Forwarder struct {
	// Secure runs the handshake on the encrypted side and returns the
	// stream carrying plaintext: the server side of a spipe handshake for
	// "spipe listen", the client side for "spipe connect". It must honour
	// ctx.
	Secure func(ctx context.Context, c net.Conn) (Conn, error)
	// SecureSide says which side Secure applies to. With SecureInbound the
	// target is dialled only after the handshake succeeded, so a peer that
	// does not hold the key never causes a connection to the target.
	SecureSide Side
	// Dial opens the connection to the target for a forwarded stream from
	// the given connection (whose addresses a PROXY header may carry).
	Dial func(ctx context.Context, from net.Conn) (net.Conn, error)

	// HandshakeTimeout bounds the handshake and, separately, the dial;
	// zero means 10 s.
	HandshakeTimeout time.Duration
	// IdleTimeout closes a connection that moved no byte either way for
	// this long; zero means never.
	IdleTimeout time.Duration
	// MaxConns caps connections being forwarded at once: through their
	// handshake (on the listening side) and dialling or copying. At the cap,
	// new ones wait (a warning is logged) until one ends. Zero means 100.
	MaxConns int
	// MaxPending caps connections accepted but not yet holding one of the
	// MaxConns places: in their handshake, or waiting for a place. Peers
	// that stall in the handshake fill this, not MaxConns, so they cannot
	// keep clients that prove the key waiting; beyond it new connections
	// wait in the listen backlog. Zero means MaxConns or 1024, whichever is
	// larger.
	MaxPending int
	// ShutdownTimeout is how long open connections may finish once Serve's
	// context is done, before they are closed.
	ShutdownTimeout time.Duration

	// Log receives one line per failed connection, at a level that says
	// whether an operator should look (Warn) or not (Info, Debug), and
	// debug lines for the rest; nil discards.
	Log *slog.Logger
	// AccessLog adds an Info record for every connection whose handshake
	// succeeded, when it ends: peer, key fingerprint, suite, forward
	// secrecy, bytes each way, duration and how it ended.
	AccessLog bool
	// Observer is told about connections, bytes and failures; nil ignores.
	Observer Observer

	linesOnce sync.Once
	lines     *lineLimiter
}

// Side names one end of a forwarded connection.
type Side int

const (
	// SecureInbound: accepted connections are encrypted, the target is
	// plaintext ("spipe listen").
	SecureInbound Side = iota
	// SecureOutbound: accepted connections are plaintext, the target is a
	// spipe listener ("spipe connect").
	SecureOutbound
)

// Observer receives the events metrics are made of. Implementations must
// be safe for concurrent use and cheap: they run on the data path.
type Observer interface {
	// ConnOpened is called once per accepted connection, ConnClosed once
	// when it is gone.
	ConnOpened()
	ConnClosed()
	// Handshake reports a handshake's duration, or why it failed.
	Handshake(d time.Duration, err error)
	// DialError reports a target (for "spipe connect": the spipe
	// listener) that could not be reached.
	DialError(err error)
	// Bytes reports n plaintext bytes forwarded toward the target (or
	// back from it).
	Bytes(toTarget bool, n int)
	// TransferError reports a connection that failed after its handshake.
	TransferError(err error)
}

const (
	defaultHandshakeTimeout = 10 * time.Second
	defaultMaxConns         = 100
	defaultMaxPending       = 1024
	limitWarnEvery          = 10 * time.Second
)

func (f *Forwarder) log() *slog.Logger {
	if f.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return f.Log
}

func (f *Forwarder) observer() Observer {
	if f.Observer == nil {
		return nopObserver{}
	}
	return f.Observer
}

// Serve accepts connections from ln and forwards each one until ctx is
// done or ln fails. When ctx is done it stops accepting, gives open
// connections ShutdownTimeout to finish, closes what remains and returns
// nil once every connection goroutine has ended. Serve closes ln.
func (f *Forwarder) Serve(ctx context.Context, ln net.Listener) error {
	maxConns := f.MaxConns
	if maxConns <= 0 {
		maxConns = defaultMaxConns
	}
	maxPending := f.MaxPending
	if maxPending <= 0 {
		maxPending = max(maxConns, defaultMaxPending)
	}
	pending := make(chan struct{}, maxPending)
	g := &gate{slots: make(chan struct{}, maxConns), log: f.log()}
	// hard is cancelled only when the grace period is over: it is what
	// closes connections still open then.
	hard, kill := context.WithCancel(context.Background())
	defer kill()
	var wg sync.WaitGroup
	stopAccept := context.AfterFunc(ctx, func() { ln.Close() })
	defer stopAccept()

	w := newWorkers(workerIdle, maxIdleWorkers)
	defer w.stop()
	acceptErr := f.acceptLoop(ctx, ln, pending, func(c net.Conn) {
		wg.Add(1)
		w.run(func() {
			defer wg.Done()
			var once sync.Once
			admitted := func() { once.Do(func() { <-pending }) }
			defer admitted()
			_ = f.handle(hard, c, g, admitted, w) // logged there; one failure never affects the others
		})
	})
	ln.Close()

	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	if acceptErr == nil && f.ShutdownTimeout > 0 {
		if n := len(pending) + len(g.slots); n > 0 {
			f.log().Info("shutting down: waiting for open connections", "open", n, "grace", f.ShutdownTimeout)
		}
		t := time.NewTimer(f.ShutdownTimeout)
		select {
		case <-done:
		case <-t.C:
			f.log().Warn("shutting down: grace period over, closing connections", "open", len(pending)+len(g.slots))
		}
		t.Stop()
	}
	kill()
	<-done
	return acceptErr
}

// acceptLoop takes a pending place before each Accept, so at MaxPending the
// kernel's backlog holds new clients until a connection is admitted or
// ends. It returns nil when ctx is done and the listener's error otherwise.
func (f *Forwarder) acceptLoop(ctx context.Context, ln net.Listener, slots chan struct{}, handle func(net.Conn)) error {
	var backoff time.Duration
	var lastWarn time.Time
	for {
		select {
		case slots <- struct{}{}:
		default:
			// Under sustained load every accept meets a full house: say so
			// at most every limitWarnEvery, not once per connection.
			if time.Since(lastWarn) >= limitWarnEvery {
				f.log().Warn("pending connection limit reached; new connections wait", "max_pending", cap(slots))
				lastWarn = time.Now()
			}
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return nil
			}
		}
		c, err := ln.Accept()
		if err != nil {
			<-slots
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			// Out of file descriptors and the like: back off rather than
			// spin, as net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			f.log().Warn("accept failed; retrying", "err", err, "in", backoff)
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return nil
			}
			continue
		}
		backoff = 0
		handle(c)
	}
}

// gate admits connections under MaxConns once they are through their
// handshake, so the places go to peers that proved the key.
type gate struct {
	slots chan struct{}
	log   *slog.Logger

	mu       sync.Mutex
	lastWarn time.Time
}

// enter waits for a place (or ctx); leave gives it back.
func (g *gate) enter(ctx context.Context) error {
	select {
	case g.slots <- struct{}{}:
		return nil
	default:
	}
	// Under sustained load every connection meets a full house: say so at
	// most every limitWarnEvery, not once per connection.
	g.mu.Lock()
	if time.Since(g.lastWarn) >= limitWarnEvery {
		g.log.Warn("connection limit reached; new connections wait", "max_conns", cap(g.slots))
		g.lastWarn = time.Now()
	}
	g.mu.Unlock()
	select {
	case g.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gate) leave() { <-g.slots }

type nopObserver struct{}

func (nopObserver) ConnOpened()                    {}
func (nopObserver) ConnClosed()                    {}
func (nopObserver) Handshake(time.Duration, error) {}
func (nopObserver) DialError(error)                {}
func (nopObserver) Bytes(bool, int)                {}
func (nopObserver) TransferError(error)            {}
