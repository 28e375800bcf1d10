package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"
)

// The stages of a connection, as its log line names the one that failed.
const (
	stageAccept    = "accept"
	stageHandshake = "handshake"
	stageAdmission = "admission"
	stageDial      = "dial"
	stageTransfer  = "transfer"
	// A multiplexed carrier's own failure, in its "carrier failed" (listen)
	// or "carrier lost" (connect) line.
	stageCarrier = "carrier"
)

// Handle forwards one accepted connection and returns once both of its
// sides are closed and its goroutines are gone. When ctx is done the
// connection is closed wherever it is (handshake, dial or transfer). The
// error is nil if both directions ended in order; otherwise it says how
// the connection ended (a side reset it: an end, counted as one) or why
// it failed. Handle logs it only at debug level, because its caller (a
// stdio connection, which is the whole of its process's work) reports it. A connection that
// fails before its transfer began is left open for the same reason: the
// caller reports the failure, then closes it, so that a peer that goes
// away as soon as the stream closes (ssh, whose ProxyCommand this is)
// leaves after the report, not before it.
func (f *Forwarder) Handle(ctx context.Context, raw net.Conn) error {
	if f.Mux != nil && f.SecureSide == SecureOutbound {
		p := f.startCarriers(true)
		defer p.close()
	}
	return f.forward(ctx, ctx, raw, nil, nil, nil, false)
}

// handle is Handle for Serve: the handshake runs under the admission
// ticket t (nil: none), and once the connection is through it, it takes a
// place at g (nil: none needed). Its failures are logged at the level they
// deserve. ctx ends when open connections must close; soft, when Serve's
// shutdown begins (a carrier then takes no new streams).
func (f *Forwarder) handle(ctx, soft context.Context, raw net.Conn, g *gate, t *ticket, w *workers) error {
	return f.forward(ctx, soft, raw, g, t, w, true)
}

// link is a connection once open: both sides, the place it holds at the
// gate and what the secure side's handshake set up.
type link struct {
	in, out Conn
	leave   func()
	session *Session // nil until the handshake succeeded
	// carrier is set instead of in when the client's handshake chose the
	// multiplexed mode: its streams are forwarded, not the connection.
	carrier Carrier
	// via is the carrier one side of a stream rides, if it is a stream.
	via Carrier
	// hold leaves in open when the connection fails before its transfer:
	// Handle's caller closes it once it has reported the failure.
	hold bool
	// answered, if set, is called once the target has sent a byte (a
	// stream then gets its carrier's allowance back).
	answered func()
}

// abortIn resets the accepted side after a failure before the transfer,
// unless Handle's caller closes it itself.
func (l *link) abortIn() {
	if !l.hold {
		abortConn(l.in)
	}
}

func (f *Forwarder) forward(ctx, soft context.Context, raw net.Conn, g *gate, t *ticket, w *workers, report bool) error {
	obs := f.observer()
	obs.ConnOpened()
	start := time.Now()
	peer := raw.RemoteAddr()

	// Until the transfer owns them, the connections close when ctx ends.
	closeRaw := context.AfterFunc(ctx, func() { raw.Close() })
	var l link
	stage := stageHandshake
	in, err := f.fromProxy(ctx, raw, t)
	if err == nil {
		peer = in.RemoteAddr()
		l, stage, err = f.open(ctx, in, g, t, !report)
	}
	closeRaw()
	if err != nil {
		obs.ConnClosed()
		// Reset, so a plaintext client of "spipe connect" does not take the
		// failure for an empty but complete answer. Handle's caller closes
		// it once it has reported the failure.
		if report {
			abortConn(rawConn{raw})
		}
		return f.failedBeforeTransfer(ctx, peer, stage, err, l.session, start, report)
	}
	if l.carrier != nil {
		// Not a connection to forward but a carrier of them: its streams
		// are counted as connections, and it as a carrier.
		obs.ConnClosed()
		if g != nil {
			if !g.enterCarrier() {
				l.carrier.Close()
				err := fmt.Errorf("%w (%d, --max-pending)", errCarrierLimit, g.maxWaiting)
				obs.AdmissionError(err)
				f.logFailure(ctx, peer, stageAdmission, err, l.session, 0, 0, report)
				return err
			}
			defer g.leaveCarrier()
		}
		return f.serveCarrier(ctx, soft, l.carrier, l.session, peer, g, w)
	}
	defer obs.ConnClosed()
	_, _, err = f.transfer(ctx, &l, peer, start, w, report)
	return err
}

// errCarrierLimit is a carrier closed because as many as MaxPending are
// open.
var errCarrierLimit = errors.New("too many multiplexed carriers open")

// errShutdownOf is err, met because the connection was closed at
// shutdown.
func errShutdownOf(err error) error { return fmt.Errorf("%w (%w)", errShutdown, err) }

// transfer copies an open link both ways, gives its place at the gate
// back, reports how it ended (an end, or a failure) and writes its log
// lines. It returns the bytes forwarded each way, and nil if both
// directions ended in order, the error otherwise (for Handle's caller: a
// stdio connection's user hears of a reset too).
func (f *Forwarder) transfer(ctx context.Context, l *link, peer net.Addr, start time.Time, w *workers, report bool) (up, down int64, err error) {
	defer l.leave()
	obs := f.observer()
	if l.answered != nil {
		obs = &answerWatch{Observer: obs, answered: l.answered}
	}
	up, down, err = f.pipe(ctx, l.in, l.out, obs, w)
	how, ok := endOf(err)
	switch {
	case ok:
	case ctx.Err() != nil:
		// Cut by the end of the shutdown's grace period, in whatever form
		// the cut reached it first (a stream may meet its carrier's close).
		how, ok = endShutdown, true
	case closedByPeer(l.via, err):
		how, ok = endReset, true
	}
	if ok {
		obs.Ended(how)
		f.logEnd(ctx, peer, l.session, up, down, start, how, err)
		return up, down, err
	}
	obs.TransferError(err)
	f.logFailure(ctx, peer, stageTransfer, err, l.session, up, down, report)
	f.logEnd(ctx, peer, l.session, up, down, start, "", err)
	return up, down, err
}

// open runs the handshake and the dial in the order that keeps the target
// safe: on the listening side the client proves the key before anything
// is dialled. Between the two it takes a place at g, if any, and on
// success l.leave gives it back. It returns the stage that failed for the
// log line, and the session as far as it got.
func (f *Forwarder) open(ctx context.Context, raw net.Conn, g *gate, t *ticket, hold bool) (l link, stage string, err error) {
	l.hold = hold
	if f.SecureSide == SecureInbound {
		l.in, l.session, l.carrier, err = f.secure(ctx, raw, f.handshakeTimeout(), t)
		if err != nil {
			return l, stageHandshake, err
		}
		if l.carrier != nil {
			return l, "", nil
		}
	} else {
		c, ok := raw.(Conn)
		if !ok {
			return l, stageAccept, fmt.Errorf("%T cannot half-close", raw)
		}
		l.in = c
	}
	stage, err = f.admitAndDial(ctx, &l, g)
	return l, stage, err
}

// admitAndDial takes a place at g, if any (l.leave gives it back), then
// dials the target for l.in.
func (f *Forwarder) admitAndDial(ctx context.Context, l *link, g *gate) (stage string, err error) {
	l.leave = func() {}
	if g != nil {
		if err := g.enter(ctx); err != nil {
			l.abortIn()
			return stageAdmission, err
		}
		l.leave = g.leave
	}
	stage, err = f.dialTarget(ctx, l, f.handshakeTimeout())
	if err != nil {
		l.leave()
		return stage, err
	}
	return "", nil
}

// handshakeTimeout is HandshakeTimeout with its default.
func (f *Forwarder) handshakeTimeout() time.Duration {
	if f.HandshakeTimeout <= 0 {
		return defaultHandshakeTimeout
	}
	return f.HandshakeTimeout
}

// dialTarget dials the target for l.in and sets l.out; on the connecting
// side it runs the handshake over it. When ctx ends meanwhile the dial
// (which honours its context) fails, and l.in is reset.
func (f *Forwarder) dialTarget(ctx context.Context, l *link, timeout time.Duration) (stage string, err error) {
	if f.SecureSide == SecureOutbound && f.carriers != nil {
		// Multiplexed: a stream on a carrier that is already open.
		l.out, l.session, err = f.carriers.open(ctx, timeout)
		if err != nil {
			l.abortIn()
			return stageDial, err
		}
		if ps, ok := l.out.(*poolStream); ok {
			l.via = ps.via
		}
		return "", nil
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	target, err := f.Dial(dctx, l.in)
	if err != nil {
		l.abortIn()
		return stageDial, err
	}
	if f.SecureSide == SecureInbound {
		out, ok := target.(Conn)
		if !ok {
			target.Close()
			l.abortIn()
			return stageDial, fmt.Errorf("%T cannot half-close", target)
		}
		l.out = out
		return "", nil
	}
	l.out, l.session, _, err = f.secure(ctx, target, timeout, nil)
	if err != nil {
		target.Close()
		l.abortIn()
		return stageHandshake, err
	}
	return "", nil
}

// secure runs Secure on c under the handshake timeout, both as a context
// deadline and as a deadline on the socket, so a peer that says nothing
// cannot hold the slot, whatever Secure does with the context. The
// handshake holds its admission ticket t (nil: none) until it ends. A
// *Secured result is unwrapped here: the rest of the engine sees the bare
// stream, or the carrier when the handshake chose the multiplexed mode.
// Observer.Handshake hears of it, unless the shutdown cut it.
func (f *Forwarder) secure(ctx context.Context, c net.Conn, timeout time.Duration, t *ticket) (Conn, *Session, Carrier, error) {
	start := time.Now()
	sc, session, carrier, err := f.runSecure(ctx, c, timeout, t)
	if !isShutdown(err) {
		// A handshake cut by the shutdown is the connection's end (see
		// failedBeforeTransfer), not a failed handshake.
		f.observer().Handshake(time.Since(start), err)
	}
	return sc, session, carrier, err
}

// runSecure is secure without the report: a carrier's keeper reports
// its own (carrierPool.connect).
func (f *Forwarder) runSecure(ctx context.Context, c net.Conn, timeout time.Duration, t *ticket) (Conn, *Session, Carrier, error) {
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	deadline, _ := hctx.Deadline()
	_ = c.SetDeadline(deadline)
	sc, err := f.Secure(hctx, t.secureConn(c))
	var session *Session
	var carrier Carrier
	if err == nil {
		if s, ok := sc.(*Secured); ok {
			sc, session, carrier = s.Conn, &s.Session, s.Carrier
		}
		err = c.SetDeadline(noDeadline)
		if err != nil && carrier != nil {
			// A carrier's session reads from the moment Secure starts it:
			// a peer's first frames may already have ended it and closed c.
			// That is the carrier's failure, which serving it reports (its
			// reason, not a failed handshake).
			err = nil
		}
		if err != nil {
			closeSecured(sc, carrier)
			sc, carrier = nil, nil
		}
	}
	// Leaving the table settles a race with a cut: a handshake that
	// succeeded as its socket was closed fails with the cut.
	if cause := t.leave(); cause != nil {
		if sc != nil || carrier != nil {
			closeSecured(sc, carrier)
			sc, carrier, session, err = nil, nil, nil, net.ErrClosed
		}
		err = &cutError{cause: cause, err: err}
	}
	return sc, session, carrier, err
}

// closeSecured closes what a handshake produced.
func closeSecured(c Conn, carrier Carrier) {
	if carrier != nil {
		carrier.Close()
	}
	if c != nil {
		c.Close()
	}
}

// failedBeforeTransfer reports and logs a connection (or stream) that
// ended before any byte was forwarded, and returns its error. One that
// this process's shutdown cut is an end; any other is a failure of its
// stage (the handshake's was reported with its duration, by secure).
func (f *Forwarder) failedBeforeTransfer(ctx context.Context, peer net.Addr, stage string, err error, s *Session, start time.Time, report bool) error {
	obs := f.observer()
	if ctx.Err() != nil || isShutdown(err) {
		if !isShutdown(err) {
			err = errShutdownOf(err)
		}
		obs.Ended(endShutdown)
		f.logEnd(ctx, peer, s, 0, 0, start, endShutdown, err)
		return err
	}
	switch stage {
	case stageDial:
		obs.DialError(err)
	case stageAdmission, stageAccept:
		obs.AdmissionError(err)
	}
	f.logFailure(ctx, peer, stage, err, s, 0, 0, report)
	f.logEnd(ctx, peer, s, 0, 0, start, "", err)
	return err
}

// logFailure writes a failed connection's one line, at the level its stage
// and reason deserve (Debug when the caller reports the error itself).
// Lines are limited per stage and source address (failureLines), so that
// neither a scan nor a burst of failing connections can fill a disk; the
// line that follows a held-back run says how many lines were suppressed.
// The metrics count every failure.
func (f *Forwarder) logFailure(ctx context.Context, peer net.Addr, stage string, err error, s *Session, up, down int64, report bool) {
	reason := Reason(err)
	level := slog.LevelDebug
	if report {
		level = f.failureLevel(stage, reason)
	}
	log := f.log()
	if !log.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, 0, 11)
	attrs = append(attrs, slog.String("peer", addrString(peer)), slog.String("stage", stage),
		slog.String("reason", reason), slog.Any("err", err))
	ok, suppressed := f.failureLines().allow(stage + " " + lineSource(peer))
	if !ok {
		return
	}
	if suppressed > 0 {
		attrs = append(attrs, slog.Int("suppressed", suppressed))
	}
	attrs = s.appendAttrs(attrs)
	if stage == stageTransfer {
		attrs = append(attrs, slog.Int64("bytes_to_target", up), slog.Int64("bytes_from_target", down))
	}
	log.LogAttrs(ctx, level, "connection failed", attrs...)
}

// logEnd writes the line of a connection that has ended: how it ended
// (how is "" for a failure, which err then names). An end is a Debug
// line; with AccessLog, every connection whose handshake succeeded gets
// an Info record instead, however it ended (a failure's record comes
// after its "connection failed" line). A connection refused in its
// handshake gets no record: its failure line (limited per source) and the
// metrics account for it, and a scan cannot fill the access log.
func (f *Forwarder) logEnd(ctx context.Context, peer net.Addr, s *Session, up, down int64, start time.Time, how string, err error) {
	level := f.endLevel(s)
	if how == "" && level == slog.LevelDebug {
		return
	}
	log := f.log()
	if !log.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, 0, 11)
	attrs = append(attrs, slog.String("peer", addrString(peer)))
	attrs = s.appendAttrs(attrs)
	attrs = append(attrs, slog.Int64("bytes_to_target", up), slog.Int64("bytes_from_target", down),
		slog.Duration("duration", time.Since(start).Round(time.Millisecond)))
	if how == "" {
		attrs = append(attrs, slog.String("end", "failed"), slog.String("reason", Reason(err)))
	} else {
		attrs = append(attrs, slog.String("end", how))
		if err != nil {
			attrs = append(attrs, slog.Any("err", err))
		}
	}
	log.LogAttrs(ctx, level, "connection closed", attrs...)
}

// endLevel is the level of the line of a connection that ended: Info
// for the access log's record, Debug otherwise.
func (f *Forwarder) endLevel(s *Session) slog.Level {
	if f.AccessLog && s != nil {
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

var noDeadline time.Time

// rawConn lets abortConn take any net.Conn.
type rawConn struct{ net.Conn }

func (rawConn) CloseWrite() error { return nil }

// NetConn returns the wrapped connection, so abortConn resets it.
func (r rawConn) NetConn() net.Conn { return r.Conn }

func addrString(a net.Addr) string {
	if a == nil {
		return "-"
	}
	if s := a.String(); s != "" && s != "@" {
		return s
	}
	return a.Network()
}
