package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spipe-dev/spipe/pkg/spipe/mux"
)

// What a carrier's streams may cost the listening side before their
// target is dialled (docs/PROTOCOL.md 7.8).
const (
	// maxWaitingStreams is how many streams of one carrier may wait at
	// once, for a --max-conns place or for the carrier's allowance; one
	// beyond them is refused at once.
	maxWaitingStreams = 16
	// earlyResetBurst and earlyResetRate are a carrier's allowance for
	// streams its client resets before their target sent a byte: each
	// takes one, and it refills at earlyResetRate a second up to
	// earlyResetBurst. While it is empty, the carrier's new streams wait
	// before their target is dialled.
	earlyResetBurst = 100
	earlyResetRate  = 100
)

// errStreamLimit is a stream refused because as many of its carrier's
// streams were already waiting: a limit, as one that waited in vain.
var errStreamLimit = fmt.Errorf("%w: %d streams of this carrier already wait for one", errLimit, maxWaitingStreams)

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

	cs := &carrierStreams{allowance: newAllowance(earlyResetBurst, earlyResetRate)}
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
	level, msg := slog.LevelDebug, "carrier closed"
	attrs := []slog.Attr{slog.String("peer", addrString(peer))}
	attrs = s.appendAttrs(attrs)
	attrs = append(attrs, slog.Int64("streams", streams), slog.Duration("duration", time.Since(start).Round(time.Millisecond)))
	if err != nil {
		obs.CarrierFailed(err)
		reason := Reason(err)
		level, msg = f.failureLevel(stageCarrier, reason), "carrier failed"
		attrs = append(attrs, slog.String("reason", reason), slog.Any("err", err))
	}
	f.log().LogAttrs(ctx, level, msg, attrs...)
	return err
}

// carrierStreams is what a carrier's streams share on the listening
// side: how many of them wait, and the allowance for early resets.
type carrierStreams struct {
	waiting   atomic.Int32
	allowance *allowance
}

// forwardStream forwards one stream of carrier as a connection: it is
// counted, admitted, dialled, copied and logged the same way. Admission
// is bounded per carrier (see carrierStreams), and a stream that ends
// before its target is dialled (its client reset it, or the carrier
// ended) is never dialled: its wait stops with it, and it is looked at
// once more right before the dial. (One that ends during the dial has
// its target connection closed as soon as the dial completes: its copy
// meets the stream's end at once.)
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
	stage, err := f.admitStream(ctx, &l, g, cs, done)
	ended := isDone(done) // by its client or its carrier, not by us
	if err == nil && ended {
		l.leave()
		stage, err = stageAdmission, context.Canceled
	}
	if err != nil {
		l.abortIn()
	} else if stage, err = f.dialTarget(ctx, &l, f.handshakeTimeout()); err != nil {
		l.leave()
	}
	if err != nil {
		if ended && ctx.Err() == nil {
			// The stream ended before its target was dialled: say how.
			if _, why := c.Read(nil); why != nil {
				err = &streamEndedError{stream: why, err: err}
				if errors.Is(why, mux.ErrStreamReset) {
					cs.allowance.take() // reset by its client before its target was dialled
				}
			}
		}
		_ = f.failedBeforeTransfer(ctx, peer, stage, err, s, start, true)
		return
	}
	_, down, err := f.transfer(ctx, &l, peer, start, w, true)
	if err != nil && down == 0 && errors.Is(err, mux.ErrStreamReset) {
		cs.allowance.take() // reset by its client before its target sent a byte
	}
}

// admitStream takes, for a stream of a carrier, its carrier's allowance
// and then a place at g (nil: none needed); l.leave gives the place back.
// On failure the caller resets the stream.
// It waits for them at most MaxConnsWait, as one of at most
// maxWaitingStreams waiting streams of the carrier (a stream beyond them
// is refused at once); waiting streams do not pause the accept loop.
func (f *Forwarder) admitStream(ctx context.Context, l *link, g *gate, cs *carrierStreams, done <-chan struct{}) (string, error) {
	l.leave = func() {}
	if cs.allowance.ready() && g.tryEnter() {
		l.leave = g.leave
		return "", nil
	}
	if cs.waiting.Add(1) > maxWaitingStreams {
		cs.waiting.Add(-1)
		return stageAdmission, errStreamLimit
	}
	defer cs.waiting.Add(-1)
	// The wait ends with the stream, or at MaxConnsWait: the gate's own
	// bound, and the allowance's.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if done != nil {
		stop := afterClose(done, cancel)
		defer stop()
	}
	err := cs.allowance.wait(wctx, f.maxConnsWait())
	if err == nil {
		err = g.enterStream(wctx)
	}
	if err != nil {
		return stageAdmission, err
	}
	l.leave = g.leave
	return "", nil
}

// streamEndedError is a stream's wait or dial that stopped because the
// stream ended first: stream is why (its client reset it, or its carrier
// ended), err what the wait or dial returned.
type streamEndedError struct{ stream, err error }

func (e *streamEndedError) Error() string {
	return "stream ended before its target was dialled: " + e.stream.Error()
}

// Unwrap gives the stream's end first: it is the reason.
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
