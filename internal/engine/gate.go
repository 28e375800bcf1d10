package engine

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// gate admits connections under MaxConns once they are through their
// handshake, so the places go to peers that proved the key. The
// connections waiting for a place are bounded too (see waitRoom), so that
// key holders opening more than MaxConns at once cannot make the process
// run out of file descriptors.
type gate struct {
	slots      chan struct{} // nil: no limit
	maxWaiting int64
	log        *slog.Logger

	open     atomic.Int64  // holding a place
	waiting  atomic.Int64  // waiting for one
	carriers atomic.Int64  // multiplexed carriers open (their streams take places)
	room     chan struct{} // a waiter left a full queue

	mu                                           sync.Mutex
	lastFullWarn, lastQueueWarn, lastCarrierWarn time.Time
}

// newGate returns a gate with maxConns places (negative: no limit) before
// which up to maxWaiting connections may wait.
func newGate(maxConns, maxWaiting int, log *slog.Logger) *gate {
	g := &gate{maxWaiting: int64(maxWaiting), log: log, room: make(chan struct{}, 1)}
	if maxConns >= 0 {
		g.slots = make(chan struct{}, maxConns)
	}
	return g
}

// enter waits for a place (or ctx); leave gives it back.
func (g *gate) enter(ctx context.Context) error {
	if g.slots == nil {
		g.open.Add(1)
		return nil
	}
	select {
	case g.slots <- struct{}{}:
		g.open.Add(1)
		return nil
	default:
	}
	// Under sustained load every connection meets a full house: say so at
	// most every limitWarnEvery, not once per connection.
	g.warn(&g.lastFullWarn, "connection limit reached; new connections wait", "max_conns", cap(g.slots))
	g.waiting.Add(1)
	defer func() {
		if g.waiting.Add(-1) == g.maxWaiting-1 {
			select {
			case g.room <- struct{}{}:
			default:
			}
		}
	}()
	select {
	case g.slots <- struct{}{}:
		g.open.Add(1)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// tryEnter takes a place if one is free now (always, on a nil gate or
// one without a limit).
func (g *gate) tryEnter() bool {
	if g == nil {
		return true
	}
	if g.slots == nil {
		g.open.Add(1)
		return true
	}
	select {
	case g.slots <- struct{}{}:
		g.open.Add(1)
		return true
	default:
		return false
	}
}

// enterStream waits for a place (or ctx) for a stream of a multiplexed
// carrier. Unlike a connection waiting in enter, a waiting stream is not
// counted toward pausing the accept loop: its carrier bounds how many of
// its streams wait (maxWaitingStreams).
func (g *gate) enterStream(ctx context.Context) error {
	if g.tryEnter() {
		return nil
	}
	g.warn(&g.lastFullWarn, "connection limit reached; new connections wait", "max_conns", cap(g.slots))
	select {
	case g.slots <- struct{}{}:
		g.open.Add(1)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gate) leave() {
	if g == nil {
		return
	}
	g.open.Add(-1)
	if g.slots != nil {
		<-g.slots
	}
}

// waitRoom returns true once fewer than maxWaiting connections wait for a
// place, false if ctx ends first. The accept loop calls it before each
// accept: only connections past their handshake wait at the gate, so
// only peers holding the key (or, for "spipe connect", local clients)
// can make accepting pause, never a flood of unauthenticated ones.
func (g *gate) waitRoom(ctx context.Context) bool {
	if g.waiting.Load() < g.maxWaiting {
		return true
	}
	g.warn(&g.lastQueueWarn, "pending connection limit reached; accepting paused until a connection ends", "max_pending", g.maxWaiting)
	for g.waiting.Load() >= g.maxWaiting {
		select {
		case <-g.room:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// enterCarrier takes one of the maxWaiting places for carriers, if one
// is free. A carrier holds no place of its own at the gate (its streams
// do), so without this bound a key holder could keep any number of them
// open; with it, authenticated sockets stay bounded as docs/PROTOCOL.md
// section 6 promises.
func (g *gate) enterCarrier() bool {
	if g.carriers.Add(1) <= g.maxWaiting {
		return true
	}
	g.carriers.Add(-1)
	g.warn(&g.lastCarrierWarn, "carrier limit reached; new multiplexed connections are closed", "max_carriers", g.maxWaiting)
	return false
}

func (g *gate) leaveCarrier() { g.carriers.Add(-1) }

// connections returns how many connections hold or wait for a place.
func (g *gate) connections() int64 { return g.open.Load() + g.waiting.Load() }

// warn logs msg unless it was logged (as last records) less than
// limitWarnEvery ago.
func (g *gate) warn(last *time.Time, msg string, args ...any) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if time.Since(*last) >= limitWarnEvery {
		g.log.Warn(msg, args...)
		*last = time.Now()
	}
}
