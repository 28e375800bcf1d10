package engine

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// What a carrier's streams may cost the listening side before their
// target is dialled (docs/PROTOCOL.md 7.8).
const (
	// maxWaitingStreams is how many streams of one carrier may wait at
	// once, for a --max-conns place or for the carrier's allowance; one
	// beyond them is refused at once.
	maxWaitingStreams = 16
	// earlyEndBurst and earlyEndRate are a carrier's allowance for
	// streams whose target has not sent a byte: each stream takes one
	// before its target is dialled and gives it back once its target
	// sends a byte (or if it reaches no target connection); it refills at
	// earlyEndRate a second up to earlyEndBurst. While it is empty, the
	// carrier's new streams wait before their target is dialled.
	earlyEndBurst = 100
	earlyEndRate  = 100
)

// errStreamLimit is a stream refused because as many of its carrier's
// streams were already waiting: a limit, as one that waited in vain.
var errStreamLimit = fmt.Errorf("%w: %d streams of this carrier already wait (for a place, or a token of its allowance)", errLimit, maxWaitingStreams)

// serveCarrier forwards the streams of a multiplexed carrier on the
// listening side: each stream is forwarded exactly as a connection is
// (a place at g, a dial of the target, the half-close copy, its own log
// lines and metrics), and one stream's failure touches no other. When
// soft ends (shutdown begins) the carrier says go-away: its client opens
// new streams elsewhere, the open ones finish, and the carrier ends once
// they have; when ctx ends it is closed at once, resetting them. If the
// carrier fails, its open streams are reset at both ends.
func (f *Forwarder) serveCarrier(ctx, soft context.Context, c Carrier, s *Session, peer net.Addr, g *gate, w *workers) error {
	obs := f.observer()
	obs.CarrierOpened()
	defer obs.CarrierClosed()
	start := time.Now()
	stream := s.stream()
	f.log().LogAttrs(ctx, slog.LevelDebug, "carrier opened", s.appendAttrs([]slog.Attr{slog.String("peer", addrString(peer))})...)

	live := f.carrierServed(c, s, peer)
	defer f.carrierDone(live)
	stopHard := context.AfterFunc(ctx, func() { c.Close() })
	defer stopHard()
	stopSoft := context.AfterFunc(soft, func() { _ = c.GoAway() })
	defer stopSoft()

	cs := &carrierStreams{allowance: f.carrierAllowance()}
	var active sync.WaitGroup
	var streams int64
	for {
		sc, err := c.Accept()
		if err != nil {
			break
		}
		conn, ok := sc.(Conn)
		if !ok {
			sc.Close() // resets it: it cannot half-close
			continue
		}
		streams++
		active.Add(1)
		w.run(func() {
			defer active.Done()
			f.forwardStream(ctx, conn, c, stream, peer, g, cs, w)
		})
	}
	active.Wait()
	err := c.Err()
	if err == nil {
		f.log().LogAttrs(ctx, slog.LevelDebug, "carrier closed", carrierAttrs(s, peer, streams, start)...)
		return nil
	}
	obs.CarrierFailed(err)
	reason := Reason(err)
	level := f.failureLevel(stageCarrier, reason)
	if !f.log().Enabled(ctx, level) {
		return err
	}
	// Limited per source as the failure lines of connections are: a key
	// holder whose carriers keep failing must not fill the disk either.
	ok, suppressed := f.failureLines().allow(stageCarrier + " " + lineSource(peer))
	if !ok {
		return err
	}
	attrs := append(carrierAttrs(s, peer, streams, start), slog.String("reason", reason), slog.Any("err", err))
	if suppressed > 0 {
		attrs = append(attrs, slog.Int("suppressed", suppressed))
	}
	f.log().LogAttrs(ctx, level, "carrier failed", attrs...)
	return err
}

// carrierAllowance makes a carrier's allowance.
func (f *Forwarder) carrierAllowance() *allowance {
	if f.streamAllowance != nil {
		return f.streamAllowance()
	}
	return newAllowance(earlyEndBurst, earlyEndRate)
}

// carrierAttrs are the attributes of a carrier's last line.
func carrierAttrs(s *Session, peer net.Addr, streams int64, start time.Time) []slog.Attr {
	attrs := s.appendAttrs([]slog.Attr{slog.String("peer", addrString(peer))})
	return append(attrs, slog.Int64("streams", streams), slog.Duration("duration", time.Since(start).Round(time.Millisecond)))
}

// carrierStreams is what a carrier's streams share on the listening
// side: how many of them wait, and the allowance for streams whose
// target has not answered.
type carrierStreams struct {
	waiting   atomic.Int32
	allowance *allowance
}

// forwardStream forwards one stream of carrier as a connection: it is
// counted, admitted, dialled, copied and logged the same way. Admission
// is bounded per carrier (see carrierStreams): the stream holds a token
// of its carrier's allowance from before its dial until its target sends
// a byte, and keeps it spent if its target never does. A stream that
// ends before its target is dialled (its client reset it, or the carrier
// ended) is never dialled and costs no token: its wait stops with it,
// and it is looked at once more right before the dial; it is an end
// (reset), not a failure of its own, as it would be once dialled. (One
// that ends during the dial has its target connection closed as soon as
// the dial completes: its copy meets the stream's end at once.)
func (f *Forwarder) forwardStream(ctx context.Context, c Conn, carrier Carrier, s *Session, peer net.Addr, g *gate, cs *carrierStreams, w *workers) {
	obs := f.observer()
	obs.ConnOpened()
	defer obs.ConnClosed()
	start := time.Now()
	var done <-chan struct{}
	if d, ok := c.(interface{ Done() <-chan struct{} }); ok {
		done = d.Done()
	}
	l := link{in: c, session: s, via: carrier}
	token, stage, err := f.admitStream(ctx, &l, g, cs, done)
	ended := isDone(done) // by its client or its carrier: not yet by us
	if err == nil && ended {
		l.leave()
		stage, err = stageAdmission, context.Canceled
	}
	if err != nil {
		token.refund() // no target connection: nothing to charge
		if ended && ctx.Err() == nil {
			// Its client gave it up, or its carrier ended (whose failure,
			// if it failed, is counted once, as the carrier's).
			if _, why := c.Read(nil); why != nil {
				err = &streamEndedError{stream: why, err: err}
			}
			l.abortIn()
			obs.Ended(endReset)
			f.logEnd(ctx, peer, s, 0, 0, start, endReset, err)
			return
		}
		l.abortIn()
		_ = f.failedBeforeTransfer(ctx, peer, stage, err, s, start, true)
		return
	}
	if stage, err = f.dialTarget(ctx, &l, f.handshakeTimeout()); err != nil {
		l.leave()
		token.refund() // no target connection: nothing to charge
		_ = f.failedBeforeTransfer(ctx, peer, stage, err, s, start, true)
		return
	}
	l.answered = token.refund
	_, _, _ = f.transfer(ctx, &l, peer, start, w, true)
}

// admitStream takes, for a stream of a carrier, a token of its carrier's
// allowance, then a place at g (nil: none needed). l.leave gives the
// place back, the token's refund the token (which the caller does once
// the stream proves honest, or reaches no target connection). On
// failure it has given back what it took, and the caller resets the
// stream.
// It waits for the two at most MaxConnsWait in all, as one of at most
// maxWaitingStreams waiting streams of the carrier (a stream beyond them
// is refused at once); waiting streams do not pause the accept loop, and
// Observer.Waiting counts them.
func (f *Forwarder) admitStream(ctx context.Context, l *link, g *gate, cs *carrierStreams, done <-chan struct{}) (*streamToken, string, error) {
	l.leave = func() {}
	var token *streamToken
	if cs.allowance.tryTake() {
		token = &streamToken{a: cs.allowance}
		if g.tryEnter() {
			l.leave = g.leave
			return token, "", nil
		}
	}
	if cs.waiting.Add(1) > maxWaitingStreams {
		cs.waiting.Add(-1)
		token.refund()
		return nil, stageAdmission, errStreamLimit
	}
	defer cs.waiting.Add(-1)
	// The wait ends with the stream, or at the one deadline.
	deadline := time.Now().Add(f.maxConnsWait())
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if done != nil {
		stop := afterClose(done, cancel)
		defer stop()
	}
	if token == nil {
		obs := f.observer()
		obs.Waiting(1)
		err := cs.allowance.take(wctx, deadline)
		obs.Waiting(-1)
		if err != nil {
			return nil, stageAdmission, err
		}
		token = &streamToken{a: cs.allowance}
	}
	if err := g.enterStream(wctx, deadline); err != nil {
		token.refund()
		return nil, stageAdmission, err
	}
	l.leave = g.leave
	return token, "", nil
}

// answerWatch is a stream's Observer during its transfer: it passes
// every event on, and calls answered once the target has sent a byte.
type answerWatch struct {
	Observer
	answered func()
	once     sync.Once
}

func (a *answerWatch) Bytes(toTarget bool, n int) {
	a.Observer.Bytes(toTarget, n)
	if !toTarget && n > 0 {
		a.once.Do(a.answered)
	}
}

// streamEndedError is a stream's admission that stopped because the
// stream ended first: stream is why (its client reset it, or its carrier
// ended), err what the admission returned. It is the err of the stream's
// end line.
type streamEndedError struct{ stream, err error }

func (e *streamEndedError) Error() string {
	return "stream ended before its target was dialled: " + e.stream.Error()
}

func (e *streamEndedError) Unwrap() []error { return []error{e.stream, e.err} }

// isDone reports whether done (nil: never) is closed.
func isDone(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// afterClose calls f once done is closed, unless stop is called first.
func afterClose(done <-chan struct{}, f func()) (stop func()) {
	quit := make(chan struct{})
	go func() {
		select {
		case <-done:
			f()
		case <-quit:
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(quit) }) }
}
