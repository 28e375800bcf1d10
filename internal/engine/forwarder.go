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
	"net/netip"
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
	// the given connection (whose addresses a PROXY header may carry). It
	// must honour ctx: its end is how a shutdown reaches a connection
	// being dialled.
	Dial func(ctx context.Context, from net.Conn) (net.Conn, error)

	// HandshakeTimeout bounds the handshake and, separately, the dial;
	// zero means 10 s.
	HandshakeTimeout time.Duration
	// IdleTimeout closes a connection that moved no byte either way for
	// this long; zero means never.
	IdleTimeout time.Duration
	// MaxConns caps connections being forwarded at once (streams of
	// multiplexed carriers included): through their handshake (on the
	// listening side) and dialling or copying. At the cap, new ones wait
	// for a place (a warning is logged) for up to MaxConnsWait. Zero means
	// 100; a negative value means no limit.
	MaxConns int
	// MaxConnsWait bounds that wait (for a stream of a carrier, together
	// with its wait for the carrier's allowance, docs/PROTOCOL.md 7.8): a
	// connection (or stream) that finds no place in that time is reset
	// and logged (a line per source at
	// most as often as handshake failures), and Observer.AdmissionError
	// hears of it (reason "limit"). Zero means 10 s; a negative value
	// means no wait: it is reset at once.
	MaxConnsWait time.Duration
	// MaxPending caps the handshakes in progress on the listening side
	// (the admission table), which bounds the sockets peers that have not
	// proven the key can hold. Accepting never waits for a place: when the
	// table is full, a new connection cuts the oldest handshake of the
	// source holding the most places (sparing, with FirstMessageSize set,
	// those that have sent their first message). Peers that stall
	// therefore only cut each other's handshakes, unless they come from so
	// many sources that each holds a single place; then they must open
	// MaxPending new connections from as many sources between an honest
	// client's connect and its first message to cut it. MaxPending also
	// caps the connections through their handshake that wait for one
	// of the MaxConns places; with that many waiting, new connections wait
	// in the listen backlog (only peers that proved the key, or local
	// clients of "spipe connect", can cause that). Zero means MaxConns or
	// 1024, whichever is larger.
	MaxPending int
	// MaxPendingPerSource caps the handshakes in progress from one source
	// (an IPv4 address, an IPv6 /64, a local user on a Unix socket: see
	// source): a new connection from a source at its cap cuts that
	// source's oldest handshake. Zero means 128 or MaxConns, whichever is
	// larger, but no more than MaxPending: one client may open as many
	// connections at once as it could have forwarded, so a "spipe
	// connect" whose --max-conns matches the listener's never cuts its own
	// handshakes.
	MaxPendingPerSource int
	// FirstMessageSize is the size of the protocol's first message on the
	// listening side (the ClientHello), which an honest client sends as
	// soon as it is connected. When set, the admission table cuts a
	// source's handshakes still waiting for that many bytes before its
	// others, and of sources holding as many places, one with such
	// handshakes first; so peers that never send a whole first message,
	// from however many addresses, cannot cut an honest client's
	// handshake once its first message is in. And a connection that has
	// not sent it FirstMessageTimeout after it was accepted is cut, so
	// idle, garbage or byte-a-second peers go long before the handshake
	// timeout. Zero turns both off.
	FirstMessageSize int
	// FirstMessageTimeout is that deadline; zero means 3 s. It applies
	// only if shorter than HandshakeTimeout.
	FirstMessageTimeout time.Duration
	// AcceptProxyFrom lists the networks of load balancers trusted to name
	// the client on the listening side: a TCP connection from an address
	// in one must begin with a PROXY protocol header (version 1 or 2),
	// complete within the first-message deadline (or the handshake
	// timeout, if that does not apply), or it fails with one log line
	// (limited per balancer address) and a handshake failure counted as
	// "proxy_header". It counts against the balancer's address in the
	// admission table until its header is read, then against the client
	// the header names, which is the connection's remote address from then
	// on: for MaxPendingPerSource, log lines, the access log and the PROXY
	// header Dial may send. A connection from any other address never has
	// a header read.
	AcceptProxyFrom []netip.Prefix
	// ShutdownTimeout is how long open connections may finish once Serve's
	// context is done, before they are closed (at once after Abort).
	ShutdownTimeout time.Duration

	// Log receives one line per failed connection, at a level that says
	// whether an operator should look (Warn) or not (Info, Debug), at most
	// five a minute per stage and source address (the metrics count every
	// one); a Debug line per connection that ended without failing
	// (closed, reset by a side, cut at shutdown); and debug lines for the
	// rest; nil discards.
	Log *slog.Logger
	// AccessLog adds an Info record for every connection whose handshake
	// succeeded, when it ends: peer, key fingerprint, suite, forward
	// secrecy, bytes each way, duration and how it ended.
	AccessLog bool
	// Observer is told about connections, bytes and failures; nil ignores.
	Observer Observer

	// Mux, on the connecting side, carries every connection as a stream
	// of a carrier kept open to the listener (Secure must then return a
	// *Secured with a Carrier). On the listening side nothing needs
	// setting: a connection whose Secure returns a Carrier is one.
	Mux *Mux

	// PlainCopyBuffer is the buffer of a copy between two plaintext
	// connections (a relay: Secure returning the socket itself); zero
	// means 64 KiB. Copies into and out of a spipe connection use its
	// frames, up to 1 MiB, so the benchmarks set this to 1 MiB for a
	// relay pair that moves data in pieces as large as spipe's.
	PlainCopyBuffer int

	linesOnce sync.Once
	plainBufs sync.Pool // PlainCopyBuffer's buffers, when it is set
	lines     *lineLimiter
	carriers  *carrierPool // while Serve or Handle runs with Mux

	liveMu       sync.Mutex
	liveCarriers map[*liveCarrier]struct{} // carriers served (listening side)
	keepKey      func(key string) bool     // RetireCarriers' last verdict

	abortOnce sync.Once
	aborted   context.Context // cancelled by Abort
	abort     context.CancelFunc

	// streamAllowance makes each carrier's allowance (nil: the
	// protocol's, earlyEndBurst and earlyEndRate): tests give theirs a
	// clock of their own.
	streamAllowance func() *allowance
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
	// AdmissionError reports a connection (or stream) turned away before
	// its dial: no MaxConns place (or, for a stream, no token of its
	// carrier's allowance) came within MaxConnsWait, or a carrier beyond
	// MaxPending.
	AdmissionError(err error)
	// Waiting reports a connection (or stream) that begins (+1) or ends
	// (-1) its wait for a MaxConns place, or a stream for its carrier's
	// allowance.
	Waiting(delta int)
	// TransferError reports a connection (or stream) that failed after
	// its handshake and dial.
	TransferError(err error)
	// Ended reports a connection (or stream) that ended without failing,
	// and how (ReasonSets.Ends): every connection ConnOpened reported
	// either ends so or fails in exactly one of the failure reports
	// (Handshake, DialError, AdmissionError, TransferError), except one
	// that becomes a multiplexed carrier.
	Ended(how string)
	// CarrierFailed reports a multiplexed carrier that ended in an error.
	CarrierFailed(err error)
	// CarrierOpenFailed reports a carrier that "spipe connect --mux"
	// could not open to the listener, and at which stage: "dial" or
	// "handshake" (ReasonSets.CarrierOpen). A carrier is no connection:
	// this is no connection's failure (one that then finds no carrier
	// fails its dial, once).
	CarrierOpenFailed(stage string, err error)
	// CarrierOpened is called when a multiplexed carrier is through its
	// handshake, CarrierClosed when it has ended. Its streams are
	// connections (ConnOpened, ConnClosed); the carrier is not.
	CarrierOpened()
	CarrierClosed()
}

const (
	defaultHandshakeTimeout    = 10 * time.Second
	defaultMaxConns            = 100
	defaultMaxConnsWait        = 10 * time.Second
	defaultMaxPending          = 1024
	defaultMaxPendingPerSource = 128
	// An honest client sends its first message as soon as it is
	// connected: 3 s leaves room for a second or two of round trip
	// (satellite links, proxies) and a couple of retransmissions of a
	// lost segment.
	defaultFirstMessageTimeout = 3 * time.Second
	limitWarnEvery             = 10 * time.Second
)

func (f *Forwarder) log() *slog.Logger {
	if f.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return f.Log
}

func (f *Forwarder) observer() Observer {
	obs := f.Observer
	if obs == nil {
		obs = nopObserver{}
	}
	if wrapObserver != nil {
		return wrapObserver(obs)
	}
	return obs
}

// wrapObserver, if set, wraps every Observer the engine reports to: the
// package's tests check with it that every reason reported is one the
// ReasonSets list (and so one README.md's table has a row for).
var wrapObserver func(Observer) Observer

// Serve accepts connections from ln and forwards each one until ctx is
// done or ln fails. When ctx is done it stops accepting, cuts the
// handshakes in progress at once, gives the connections through theirs
// ShutdownTimeout to finish, closes what remains and returns nil once
// every connection goroutine has ended; Abort cuts that short. Serve
// closes ln.
func (f *Forwarder) Serve(ctx context.Context, ln net.Listener) error {
	aborted := f.abortContext()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	stopOnAbort := context.AfterFunc(aborted, stop)
	defer stopOnAbort()
	maxConns, maxPending, perSource := f.limits()
	g := newGate(maxConns, maxPending, f.maxConnsWait(), f.log(), f.observer())
	// Only the listening side has handshakes to admit: "spipe connect"
	// accepts plaintext, which goes straight to the gate.
	var adm *admission
	if f.SecureSide == SecureInbound {
		adm = newAdmission(maxPending, perSource, f.helloRule(), f.log())
	}
	// hard is cancelled only when the grace period is over (or Abort
	// cuts it short): it is what closes connections still open then.
	hard, kill := context.WithCancel(aborted)
	defer kill()
	var wg sync.WaitGroup
	stopAccept := context.AfterFunc(ctx, func() {
		ln.Close()
		// A handshake still in progress has forwarded nothing: nothing is
		// lost by cutting it, and it must not hold up the shutdown.
		if adm != nil {
			adm.close(errShutdown)
		}
	})
	defer stopAccept()

	w := newWorkers(workerIdle, maxIdleWorkers)
	defer w.stop()
	if f.Mux != nil && f.SecureSide == SecureOutbound {
		// Opened now, so the first connection finds its carrier ready;
		// closed once every connection has ended.
		p := f.startCarriers(false)
		defer p.close()
	}
	acceptErr := f.acceptLoop(ctx, ln, g, func(c net.Conn) {
		var t *ticket
		if adm != nil {
			t = adm.add(c, f.trustsProxy(c))
		}
		wg.Add(1)
		w.run(func() {
			defer wg.Done()
			_ = f.handle(hard, ctx, c, g, t, w) // logged there; one failure never affects the others
		})
	})
	ln.Close()

	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	if acceptErr == nil && f.ShutdownTimeout > 0 {
		if n := g.connections(); n > 0 {
			f.log().Info("shutting down: waiting for open connections", "open", n, "grace", f.ShutdownTimeout)
		}
		t := time.NewTimer(f.ShutdownTimeout)
		select {
		case <-done:
		case <-hard.Done(): // Abort: its caller says so
		case <-t.C:
			f.log().Warn("shutting down: grace period over, closing connections", "open", g.connections())
		}
		t.Stop()
	}
	kill()
	<-done
	return acceptErr
}

// Abort makes a Serve that is running, or runs later, stop at once: it
// stops accepting, as if its context were done, and closes every
// connection still open without waiting for ShutdownTimeout. It is what
// a second SIGINT or SIGTERM does.
func (f *Forwarder) Abort() { f.abortContext(); f.abort() }

// abortContext returns the context Abort cancels.
func (f *Forwarder) abortContext() context.Context {
	f.abortOnce.Do(func() { f.aborted, f.abort = context.WithCancel(context.Background()) })
	return f.aborted
}

// limits returns MaxConns (negative: none), MaxPending and
// MaxPendingPerSource with their defaults.
func (f *Forwarder) limits() (maxConns, maxPending, perSource int) {
	maxConns = f.MaxConns
	if maxConns == 0 {
		maxConns = defaultMaxConns
	}
	maxPending = f.MaxPending
	if maxPending <= 0 {
		maxPending = max(maxConns, defaultMaxPending)
	}
	perSource = f.MaxPendingPerSource
	if perSource <= 0 {
		perSource = max(defaultMaxPendingPerSource, maxConns)
	}
	return maxConns, maxPending, min(perSource, maxPending)
}

// maxConnsWait is MaxConnsWait with its default (0: no wait).
func (f *Forwarder) maxConnsWait() time.Duration {
	switch {
	case f.MaxConnsWait == 0:
		return defaultMaxConnsWait
	case f.MaxConnsWait < 0:
		return 0
	}
	return f.MaxConnsWait
}

// helloRule is the first message's size and deadline (0: none, when the
// handshake timeout comes first).
func (f *Forwarder) helloRule() helloRule {
	hs := f.handshakeTimeout()
	r := helloRule{size: f.FirstMessageSize, timeout: f.FirstMessageTimeout}
	if r.timeout <= 0 {
		r.timeout = defaultFirstMessageTimeout
	}
	if r.size <= 0 || r.timeout >= hs {
		r.timeout = 0
	}
	return r
}

// acceptLoop accepts until ctx is done or ln fails, pausing only while
// the gate's queue of connections through their handshake is full. It
// returns nil when ctx is done and the listener's error otherwise.
func (f *Forwarder) acceptLoop(ctx context.Context, ln net.Listener, g *gate, handle func(net.Conn)) error {
	var backoff time.Duration
	for {
		if !g.waitRoom(ctx) {
			return nil
		}
		c, err := ln.Accept()
		if err != nil {
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

type nopObserver struct{}

func (nopObserver) ConnOpened()                     {}
func (nopObserver) ConnClosed()                     {}
func (nopObserver) Handshake(time.Duration, error)  {}
func (nopObserver) DialError(error)                 {}
func (nopObserver) Bytes(bool, int)                 {}
func (nopObserver) AdmissionError(error)            {}
func (nopObserver) Waiting(int)                     {}
func (nopObserver) TransferError(error)             {}
func (nopObserver) Ended(string)                    {}
func (nopObserver) CarrierFailed(error)             {}
func (nopObserver) CarrierOpenFailed(string, error) {}
func (nopObserver) CarrierOpened()                  {}
func (nopObserver) CarrierClosed()                  {}
