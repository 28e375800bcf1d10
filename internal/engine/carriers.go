package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spipe-dev/spipe/pkg/spipe/mux"
)

// Defaults of Mux.
const (
	defaultCarriers          = 1
	defaultStreamsPerCarrier = 1000
)

// A carrier that fails to open, or ends or goes away before it has served
// a stream (a listener at its --max-pending closes one right after its
// handshake), is re-opened after a pause of carrierBackoff, doubled after
// each further such carrier up to carrierMaxBackoff, and jittered (a
// random time between half of it and all of it); but while a connection
// waits for a carrier, after at most carrierDemandBackoff, so that a
// listener that is back (a restart) serves it at once. A carrier that
// served a stream, or stayed up carrierProven, resets the pause: its
// successor opens at once.
const (
	carrierBackoff       = 100 * time.Millisecond
	carrierMaxBackoff    = 5 * time.Second
	carrierDemandBackoff = 250 * time.Millisecond
	carrierProven        = 10 * time.Second
)

// carrierOpenLevel is the level of a keeper's line about a carrier that
// failed to open: whatever the reason, no connection gets through
// --mux until one opens.
const carrierOpenLevel = slog.LevelWarn

// errNoCarrier is a connection that found no carrier with room in time.
var errNoCarrier = errors.New("no carrier to the listener")

// carrierPool keeps Mux.Carriers carriers open to the listener on the
// connecting side and opens streams on them. Each carrier has a keeper
// that opens it (dial and handshake, like a connection's), waits for it
// to end, or to say go-away, and opens it again: at once after a carrier
// that served a stream, after a growing pause (with jitter) after one
// that failed to open or served nothing, shortened while connections
// wait for a carrier.
// So a carrier that dies is replaced for the connections that follow, a
// listener that restarts is served again as soon as it is back, and a
// listener that is down is not hammered.
type carrierPool struct {
	f             *Forwarder
	quiet         bool // Handle's: its caller reports the one connection's failure
	n, perCarrier int
	ctx           context.Context
	stop          context.CancelFunc
	wg            sync.WaitGroup

	mu      sync.Mutex
	live    []*pooled     // carriers up, in no order
	changed chan struct{} // closed (and replaced) when live or room changes
	lastErr error         // why the last carrier failed to open
	wanted  chan struct{} // closed (and replaced) when a connection finds no carrier
}

// pooled is a carrier of the pool with the streams it carries now.
type pooled struct {
	c       Carrier
	session *Session
	streams int
	retired chan struct{} // closed when it must take no more streams
	retire  sync.Once
	// served: a stream on it heard from the listener (a byte, or its
	// clean end), so the listener took it and was no refusal.
	served atomic.Bool
}

// startCarriers starts f's pool (Mux must be set). A quiet pool logs
// only at debug level.
func (f *Forwarder) startCarriers(quiet bool) *carrierPool {
	m := f.Mux
	p := &carrierPool{f: f, quiet: quiet, n: m.Carriers, perCarrier: m.StreamsPerCarrier,
		changed: make(chan struct{}), wanted: make(chan struct{})}
	if p.n <= 0 {
		p.n = defaultCarriers
	}
	if p.perCarrier <= 0 {
		p.perCarrier = defaultStreamsPerCarrier
	}
	p.ctx, p.stop = context.WithCancel(context.Background())
	f.carriers = p
	for i := range p.n {
		p.wg.Add(1)
		go p.keep(i)
	}
	return p
}

// close closes every carrier (each sends what it has queued first) and
// waits for the keepers. Call it once no connection uses the pool.
func (p *carrierPool) close() {
	p.stop()
	p.wg.Wait()
}

// keep keeps carrier slot i open until the pool closes.
func (p *carrierPool) keep(i int) {
	defer p.wg.Done()
	var backoff, wait time.Duration // the pause's bound, and the pause
	for {
		if wait > 0 && !p.pause(wait) {
			return
		}
		if p.ctx.Err() != nil {
			return
		}
		c, s, err := p.connect()
		if err != nil {
			if p.ctx.Err() != nil {
				return
			}
			backoff, wait = nextBackoff(backoff)
			p.failed(err)
			p.f.observer().CarrierOpenFailed(stageOf(err), err)
			p.logAt(carrierOpenLevel, "carrier failed to open; retrying", slog.String("target", p.target()), slog.Int("carrier", i),
				slog.String("stage", stageOf(err)), slog.String("reason", Reason(err)), slog.Any("err", err),
				slog.Duration("retry_in", wait.Round(time.Millisecond)))
			continue
		}
		// A carrier that the listener closes or sends away before it
		// served anything (it has as many as it takes) is retried after
		// the same growing pause as one that failed to open, not in a
		// tight loop; one that served a stream, or stayed up long, is
		// replaced at once (the listener is restarting, say).
		if p.serve(i, c, s) {
			backoff, wait = 0, 0
		} else {
			backoff, wait = nextBackoff(backoff)
			p.logAt(slog.LevelDebug, "carrier served no stream; pausing before the next", slog.String("target", p.target()),
				slog.Int("carrier", i), slog.Duration("retry_in", wait.Round(time.Millisecond)))
		}
	}
}

// nextBackoff doubles a keeper's pause bound (from carrierBackoff, up to
// carrierMaxBackoff) and draws the pause from its upper half: the jitter
// keeps the carriers of many clients from retrying in step.
func nextBackoff(backoff time.Duration) (time.Duration, time.Duration) {
	backoff = min(max(2*backoff, carrierBackoff), carrierMaxBackoff)
	return backoff, backoff/2 + rand.N(backoff/2+1)
}

// pause waits d before a keeper tries again, or at most
// carrierDemandBackoff from its start once a connection is waiting for a
// carrier. It returns false if the pool closed meanwhile.
func (p *carrierPool) pause(d time.Duration) bool {
	now := time.Now()
	until, demanded := now.Add(d), now.Add(carrierDemandBackoff)
	for {
		p.mu.Lock()
		wanted := p.wanted
		p.mu.Unlock()
		t := time.NewTimer(time.Until(until))
		select {
		case <-t.C:
			return true
		case <-p.ctx.Done():
			t.Stop()
			return false
		case <-wanted:
			t.Stop()
			if demanded.Before(until) {
				until = demanded
			}
		}
	}
}

// stageOf names where opening a carrier failed, for its log line.
func stageOf(err error) string {
	if errors.Is(err, errDial) {
		return stageDial
	}
	return stageHandshake
}

// errDial marks a carrier that could not be dialled.
var errDial = errors.New("dial")

// connect dials the listener and runs the handshake, as a connection's
// dial does. A carrier's own connection is not a connection of the
// metrics' (they add up without it): its failure to open is its
// keeper's, counted apart (Observer.CarrierOpenFailed), and a connection
// that then finds no carrier fails its own dial, once. A handshake that
// succeeds has its duration observed as any other.
func (p *carrierPool) connect() (Carrier, *Session, error) {
	f := p.f
	timeout := f.handshakeTimeout()
	dctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	raw, err := f.Dial(dctx, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errDial, err)
	}
	stop := context.AfterFunc(p.ctx, func() { raw.Close() })
	defer stop()
	start := time.Now()
	sc, s, c, err := f.runSecure(p.ctx, raw, timeout, nil)
	if err != nil {
		raw.Close()
		return nil, nil, err
	}
	f.observer().Handshake(time.Since(start), nil)
	if c == nil {
		sc.Close()
		return nil, nil, errors.New("the handshake did not set up a carrier")
	}
	return c, s.stream(), nil
}

// serve publishes carrier c until it ends, goes away or the pool closes,
// then closes it (one that went away, once its streams have ended). It
// reports whether the carrier proved itself: a stream on it heard from
// the listener, or it stayed up carrierProven.
func (p *carrierPool) serve(i int, c Carrier, s *Session) bool {
	f := p.f
	obs := f.observer()
	obs.CarrierOpened()
	defer obs.CarrierClosed()
	start := time.Now()
	// Logged before the carrier takes streams, so that the log never
	// shows a stream on a carrier it has not announced.
	attrs := []slog.Attr{slog.String("target", p.target()), slog.Int("carrier", i)}
	p.logAt(slog.LevelInfo, "carrier open", s.appendAttrs(attrs)...)
	pc := &pooled{c: c, session: s, retired: make(chan struct{})}
	p.mu.Lock()
	p.live = append(p.live, pc)
	p.lastErr = nil
	p.broadcast()
	p.mu.Unlock()

	retired, goneAway := false, false
	select {
	case <-c.Done():
	case <-p.ctx.Done():
	case <-pc.retired:
		retired = true
	case <-c.GoingAway():
		select {
		case <-c.Done(): // it ended already: as any end
		default:
			retired, goneAway = true, true
		}
	}
	p.mu.Lock()
	p.live = slices.DeleteFunc(p.live, func(q *pooled) bool { return q == pc })
	p.broadcast()
	p.mu.Unlock()
	if retired {
		// It takes no new streams but carries its open ones to their end
		// while the keeper opens its successor.
		msg := "carrier retired: it can open no more streams; opening another"
		if goneAway {
			msg = "carrier going away (the listener is shutting down, or no longer takes its key); opening another"
		}
		p.logAt(slog.LevelInfo, msg, attrs...)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.drain(pc)
			c.Close()
		}()
		return pc.proven(start)
	}
	c.Close()

	err := c.Err()
	attrs = append(attrs, slog.Duration("duration", time.Since(start).Round(time.Millisecond)))
	switch {
	case err != nil:
		obs.CarrierFailed(err)
		p.logAt(f.failureLevel(stageCarrier, Reason(err)), "carrier lost; its streams were reset, opening another",
			append(attrs, slog.String("reason", Reason(err)), slog.Any("err", err))...)
	case p.ctx.Err() == nil:
		p.logAt(slog.LevelInfo, "carrier closed by the listener; opening another", attrs...)
	default:
		p.logAt(slog.LevelDebug, "carrier closed", attrs...)
	}
	return pc.proven(start)
}

// proven reports whether a carrier up since start proved itself (serve).
func (pc *pooled) proven(start time.Time) bool {
	return pc.served.Load() || time.Since(start) >= carrierProven
}

// logAt logs a carrier's line at level, or at debug level in a quiet
// pool: a stdio connection's terminal is its user's, and what went wrong
// reaches the user as the connection's own error.
func (p *carrierPool) logAt(level slog.Level, msg string, attrs ...slog.Attr) {
	if p.quiet {
		level = slog.LevelDebug
	}
	p.f.log().LogAttrs(context.Background(), level, msg, attrs...)
}

func (p *carrierPool) target() string {
	if t := p.f.Mux.Target; t != "" {
		return t
	}
	return "-"
}

// drain returns once pc carries no stream, or it has ended, or the pool
// closes.
func (p *carrierPool) drain(pc *pooled) {
	for {
		p.mu.Lock()
		n, changed := pc.streams, p.changed
		p.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-changed:
		case <-pc.c.Done():
			return
		case <-p.ctx.Done():
			return
		}
	}
}

// failed records why a carrier failed to open, for connections that
// find none.
func (p *carrierPool) failed(err error) {
	p.mu.Lock()
	p.lastErr = err
	p.broadcast()
	p.mu.Unlock()
}

// broadcast wakes every open waiting for a carrier or for room. p.mu is
// held.
func (p *carrierPool) broadcast() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// open opens a stream on the live carrier carrying the fewest, waiting
// (within ctx, and at most timeout) while none is up or all are full. The
// stream gives its place back when closed. Opening on a carrier with room,
// the usual case, neither waits nor starts a timer.
func (p *carrierPool) open(ctx context.Context, timeout time.Duration) (Conn, *Session, error) {
	waiting := false
	for {
		p.mu.Lock()
		var best *pooled
		for _, pc := range p.live {
			if pc.streams < p.perCarrier && (best == nil || pc.streams < best.streams) {
				best = pc
			}
		}
		if best == nil {
			changed, last := p.changed, p.lastErr
			if len(p.live) == 0 {
				// Wake the keepers out of their pause: a connection waits.
				close(p.wanted)
				p.wanted = make(chan struct{})
			}
			p.mu.Unlock()
			if !waiting {
				waiting = true
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			select {
			case <-changed:
				continue
			case <-ctx.Done():
				return nil, nil, &noCarrierError{last: last, ctx: ctx.Err()}
			}
		}
		best.streams++
		p.mu.Unlock()
		sc, err := best.c.Open(ctx)
		if err == nil {
			if c, ok := sc.(Conn); ok {
				return &poolStream{Conn: c, via: best.c, pc: best, release: func() { p.release(best) }}, best.session, nil
			}
			sc.Close()
			err = fmt.Errorf("%T cannot half-close", sc)
		}
		p.release(best)
		if ctx.Err() != nil {
			return nil, nil, &noCarrierError{last: err, ctx: ctx.Err()}
		}
		if errors.Is(err, mux.ErrSessionClosed) || errors.Is(err, mux.ErrGoAway) {
			// It is ending, or going away, under us: its keeper replaces
			// it.
			select {
			case <-best.c.Done():
			case <-best.c.GoingAway():
			case <-ctx.Done():
			}
			p.mu.Lock()
			p.live = slices.DeleteFunc(p.live, func(q *pooled) bool { return q == best })
			p.mu.Unlock()
			continue
		}
		// It lives on but opens no more streams (its stream ids ran out
		// after some 2^31 streams): retire it.
		best.retire.Do(func() { close(best.retired) })
	}
}

// release gives back a stream's place on pc.
func (p *carrierPool) release(pc *pooled) {
	p.mu.Lock()
	pc.streams--
	p.broadcast()
	p.mu.Unlock()
}

// noCarrierError is a connection that found no carrier with room in
// time: why the last carrier failed to open, if one did.
type noCarrierError struct{ last, ctx error }

func (e *noCarrierError) Error() string {
	if e.last != nil {
		return fmt.Sprintf("%v (%v; last carrier failure: %v)", errNoCarrier, e.ctx, e.last)
	}
	return fmt.Sprintf("%v (%v)", errNoCarrier, e.ctx)
}

func (e *noCarrierError) Unwrap() []error {
	if e.last != nil {
		return []error{errNoCarrier, e.last}
	}
	return []error{errNoCarrier, e.ctx}
}

// poolStream is a stream of a pooled carrier; closing it gives its place
// back.
type poolStream struct {
	Conn
	via     Carrier // the carrier it rides
	pc      *pooled // the same, in the pool
	release func()
	once    sync.Once
}

func (s *poolStream) Close() error {
	err := s.Conn.Close()
	s.once.Do(s.release)
	return err
}

// ReadFrom is the stream's own (see framed).
func (s *poolStream) ReadFrom(r io.Reader) (int64, error) {
	return s.Conn.(io.ReaderFrom).ReadFrom(r)
}

// WriteTo is the stream's own (see framedSource). It marks its carrier
// as having served a stream once a byte from the listener arrives, or the
// listener's clean end.
func (s *poolStream) WriteTo(w io.Writer) (int64, error) {
	sw := &servedWriter{Writer: w, pc: s.pc}
	var dst io.Writer = sw
	if tw, ok := w.(tryWriter); ok {
		// Keep the stream's direct path (mux.Stream.WriteTo).
		dst = &servedTryWriter{servedWriter: sw, tw: tw}
	}
	n, err := s.Conn.(io.WriterTo).WriteTo(dst)
	if err == nil {
		s.pc.served.Store(true)
	}
	return n, err
}

// tryWriter is a writer that can also write without blocking, as
// mux.Stream.WriteTo uses it (the engine's watchedWriter, on Unix).
type tryWriter interface {
	TryWrite(p []byte) (int, error)
}

// servedWriter is the writer of a pooled stream's WriteTo: the first
// byte it writes marks the carrier as having served a stream.
type servedWriter struct {
	io.Writer
	pc *pooled
}

func (w *servedWriter) Write(p []byte) (int, error) {
	w.mark(len(p))
	return w.Writer.Write(p)
}

func (w *servedWriter) mark(n int) {
	if n > 0 && !w.pc.served.Load() {
		w.pc.served.Store(true)
	}
}

// servedTryWriter is a servedWriter over a tryWriter, keeping TryWrite.
type servedTryWriter struct {
	*servedWriter
	tw tryWriter
}

func (w *servedTryWriter) TryWrite(p []byte) (int, error) {
	n, err := w.tw.TryWrite(p)
	w.mark(n)
	return n, err
}

var _ net.Conn = (*poolStream)(nil)
