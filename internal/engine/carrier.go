package engine

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// serveCarrier forwards the streams of a multiplexed carrier on the
// listening side: each stream is forwarded exactly as a connection is
// (a place at g, a dial of the target, the half-close copy, its own log
// lines and metrics), and one stream's failure touches no other. When
// soft ends (shutdown begins) the carrier takes no new streams (they are
// reset) and is closed once its open streams have ended; when ctx ends
// it is closed at once, resetting them. If the carrier fails, its open
// streams are reset at both ends.
func (f *Forwarder) serveCarrier(ctx, soft context.Context, c Carrier, s *Session, peer net.Addr, g *gate, w *workers) error {
	obs := f.observer()
	obs.CarrierOpened()
	defer obs.CarrierClosed()
	start := time.Now()
	stream := s.stream()
	f.log().LogAttrs(ctx, slog.LevelDebug, "carrier opened", s.appendAttrs([]slog.Attr{slog.String("peer", addrString(peer))})...)

	stopHard := context.AfterFunc(ctx, func() { c.Close() })
	defer stopHard()
	var draining atomic.Bool
	var active sync.WaitGroup
	var open atomic.Int64
	closeIfIdle := func() {
		if draining.Load() && open.Load() == 0 {
			go c.Close() // sends what is queued, so it may wait for the peer
		}
	}
	stopSoft := context.AfterFunc(soft, func() { draining.Store(true); closeIfIdle() })
	defer stopSoft()

	var streams int64
	for {
		sc, err := c.Accept()
		if err != nil {
			break
		}
		conn, ok := sc.(Conn)
		if !ok || draining.Load() {
			sc.Close() // resets it: shutting down (or cannot half-close)
			continue
		}
		streams++
		open.Add(1)
		active.Add(1)
		run := func() {
			defer func() {
				open.Add(-1)
				closeIfIdle()
				active.Done()
			}()
			f.forwardStream(ctx, conn, c, stream, peer, g, w)
		}
		w.run(run)
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

// forwardStream forwards one stream of carrier as a connection: it is
// counted, admitted, dialled, copied and logged the same way.
func (f *Forwarder) forwardStream(ctx context.Context, c Conn, carrier Carrier, s *Session, peer net.Addr, g *gate, w *workers) {
	obs := f.observer()
	obs.ConnOpened()
	defer obs.ConnClosed()
	start := time.Now()
	l := link{in: c, session: s, via: carrier}
	stage, err := f.admitAndDial(ctx, &l, g)
	if err != nil {
		_ = f.failedBeforeTransfer(ctx, peer, stage, err, s, start, true)
		return
	}
	_ = f.transfer(ctx, &l, peer, start, w, true)
}
