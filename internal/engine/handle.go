package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"
)

// Handle forwards one accepted connection and returns once both of its
// sides are closed and its goroutines are gone. When ctx is done the
// connection is closed wherever it is (handshake, dial or transfer). The
// error, already logged, is why the connection failed; nil if it ended
// cleanly.
func (f *Forwarder) Handle(ctx context.Context, raw net.Conn) error {
	return f.handle(ctx, raw, nil, nil, nil)
}

// handle is Handle for Serve: the handshake runs under the admission
// ticket t (nil: none), and once the connection is through it, it takes a
// place at g (nil: none needed).
func (f *Forwarder) handle(ctx context.Context, raw net.Conn, g *gate, t *ticket, w *workers) error {
	obs := f.observer()
	obs.ConnOpened()
	defer obs.ConnClosed()
	start := time.Now()
	// Built only for a line that is written: most connections log nothing,
	// and With formats its attributes at once.
	log := func() *slog.Logger { return f.log().With("peer", addrString(raw.RemoteAddr())) }

	// Until the transfer owns them, the connections close when ctx ends.
	closeRaw := context.AfterFunc(ctx, func() { raw.Close() })
	in, out, leave, stage, err := f.open(ctx, raw, g, t)
	closeRaw()
	if err != nil {
		// Reset, so a plaintext client of "spipe connect" does not take the
		// failure for an empty but complete answer.
		abortConn(rawConn{raw})
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", errShutdown, err)
		}
		// A handshake the admission table cut is routine under a flood:
		// counted (its reason), but not a warning per connection.
		level := slog.LevelWarn
		if _, cut := errors.AsType[*cutError](err); cut {
			level = slog.LevelDebug
		}
		if f.log().Enabled(ctx, level) {
			log().Log(ctx, level, "connection failed", "stage", stage, "reason", Reason(err), "err", err)
		}
		return err
	}
	defer leave()
	up, down, err := f.pipe(ctx, in, out, w)
	if err != nil {
		obs.TransferError(err)
		log().Warn("connection failed", "stage", "transfer", "reason", Reason(err), "err", err,
			"bytes_to_target", up, "bytes_from_target", down)
		return err
	}
	if f.log().Enabled(ctx, slog.LevelDebug) {
		log().Debug("connection closed", "bytes_to_target", up, "bytes_from_target", down,
			"duration", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// open runs the handshake and the dial in the order that keeps the target
// safe: on the listening side the client proves the key before anything
// is dialled. Between the two it takes a place at g, if any, and on
// success returns leave to give it back. It returns the stage that failed
// for the log line.
func (f *Forwarder) open(ctx context.Context, raw net.Conn, g *gate, t *ticket) (in, out Conn, leave func(), stage string, err error) {
	timeout := f.HandshakeTimeout
	if timeout <= 0 {
		timeout = defaultHandshakeTimeout
	}
	if f.SecureSide == SecureInbound {
		in, err = f.secure(ctx, raw, timeout, t)
		if err != nil {
			return nil, nil, nil, "handshake", err
		}
	} else {
		c, ok := raw.(Conn)
		if !ok {
			return nil, nil, nil, "accept", fmt.Errorf("%T cannot half-close", raw)
		}
		in = c
	}
	leave = func() {}
	if g != nil {
		if err := g.enter(ctx); err != nil {
			abortConn(in)
			return nil, nil, nil, "admission", err
		}
		leave = g.leave
	}
	in, out, stage, err = f.dialTarget(ctx, in, timeout)
	if err != nil {
		leave()
		return nil, nil, nil, stage, err
	}
	return in, out, leave, "", nil
}

// dialTarget dials the target for in and, on the connecting side, runs the
// handshake over it.
func (f *Forwarder) dialTarget(ctx context.Context, in Conn, timeout time.Duration) (_, out Conn, stage string, err error) {
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	closeIn := context.AfterFunc(ctx, func() { abortConn(in) })
	defer closeIn()
	target, err := f.Dial(dctx, in)
	if err != nil {
		abortConn(in)
		return nil, nil, "dial", err
	}
	if f.SecureSide == SecureInbound {
		out, ok := target.(Conn)
		if !ok {
			target.Close()
			abortConn(in)
			return nil, nil, "dial", fmt.Errorf("%T cannot half-close", target)
		}
		return in, out, "", nil
	}
	out, err = f.secure(ctx, target, timeout, nil)
	if err != nil {
		target.Close()
		abortConn(in)
		return nil, nil, "handshake", err
	}
	return in, out, "", nil
}

// secure runs Secure on c under the handshake timeout, both as a context
// deadline and as a deadline on the socket, so a peer that says nothing
// cannot hold the slot, whatever Secure does with the context. The
// handshake holds its admission ticket t (nil: none) until it ends.
func (f *Forwarder) secure(ctx context.Context, c net.Conn, timeout time.Duration, t *ticket) (Conn, error) {
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	deadline, _ := hctx.Deadline()
	_ = c.SetDeadline(deadline)
	sc, err := f.Secure(hctx, t.secureConn(c))
	if err == nil {
		err = c.SetDeadline(noDeadline)
		if err != nil {
			sc.Close()
			sc = nil
		}
	}
	// Leaving the table settles a race with a cut: a handshake that
	// succeeded as its socket was closed fails with the cut.
	if cause := t.leave(); cause != nil {
		if sc != nil {
			sc.Close()
			sc, err = nil, net.ErrClosed
		}
		err = &cutError{cause: cause, err: err}
	}
	f.observer().Handshake(time.Since(start), err)
	return sc, err
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
