package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// errLimit is a connection (or stream) that found no MaxConns place
// within MaxConnsWait.
var errLimit = errors.New("no connection place free in time")

// gate admits connections and streams under MaxConns once they are
// through their handshake, so the places go to peers that proved the
// key. Each waits for a place at most maxWait, then is turned away
// (errLimit): a client is reset, not left hanging. The connections waiting
// are bounded too (see waitRoom), so that key holders opening more than
// MaxConns at once cannot make the process run out of file descriptors.
type gate struct {
	slots      chan struct{} // nil: no limit
	maxWaiting int64
	maxWait    time.Duration // 0: no wait at all
	log        *slog.Logger
	obs        Observer

	open     atomic.Int64  // holding a place
	waiting  atomic.Int64  // waiting for one
	carriers atomic.Int64  // multiplexed carriers open (their streams take places)
	room     chan struct{} // a waiter left a full queue

	mu                                           sync.Mutex
	lastFullWarn, lastQueueWarn, lastCarrierWarn time.Time
}

// newGate returns a gate with maxConns places (negative: no limit) for
// which a connection waits at most maxWait (0: not at all), and before
// which up to maxWaiting connections may wait. obs hears how many wait.
func newGate(maxConns, maxWaiting int, maxWait time.Duration, log *slog.Logger, obs Observer) *gate {
	g := &gate{maxWaiting: int64(maxWaiting), maxWait: maxWait, log: log, obs: obs, room: make(chan struct{}, 1)}
	if maxConns >= 0 {
		g.slots = make(chan struct{}, maxConns)
	}
	return g
}

// enter takes a place, waiting for one at most maxWait. It fails with an
// error wrapping errLimit when none came free in time, or with ctx's
// error when ctx ends first; leave gives a place back. It knows nothing
// of what takes the place, so a connection and a stream of a carrier
// enter alike; but only a connection that waits counts toward pausing
// the accept loop (waitRoom).
func (g *gate) enter(ctx context.Context) error { return g.wait(ctx, time.Now().Add(g.maxWait), true) }

// enterStream is enter for a stream of a multiplexed carrier, whose wait
// ends at deadline: the stream's admission began before it came here
// (admitStream), and one bound covers the whole of it. A waiting stream
// does not count toward pausing the accept loop: its carrier bounds how
// many of its streams wait (maxWaitingStreams), and the carriers are
// bounded too (enterCarrier).
func (g *gate) enterStream(ctx context.Context, deadline time.Time) error {
	return g.wait(ctx, deadline, false)
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

// wait is enter with its deadline, counting the wait in waiting (for
// waitRoom) if counted.
func (g *gate) wait(ctx context.Context, deadline time.Time, counted bool) error {
	if g.tryEnter() {
		return nil
	}
	// Under sustained load every connection meets a full house: say so at
	// most every limitWarnEvery, not once per connection.
	g.warn(&g.lastFullWarn, "connection limit reached; new connections wait for a place, and are reset if none comes free in time",
		"max_conns", cap(g.slots), "max_wait", g.maxWait)
	left := time.Until(deadline)
	if left <= 0 {
		return g.limitError()
	}
	g.obs.Waiting(1)
	defer g.obs.Waiting(-1)
	if counted {
		g.waiting.Add(1)
		defer func() {
			if g.waiting.Add(-1) == g.maxWaiting-1 {
				select {
				case g.room <- struct{}{}:
				default:
				}
			}
		}()
	}
	t := time.NewTimer(left)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		g.open.Add(1)
		return nil
	case <-t.C:
		return g.limitError()
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gate) limitError() error {
	return fmt.Errorf("%w: all %d taken for %v (--max-conns, --max-conns-wait)", errLimit, cap(g.slots), g.maxWait)
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
// can make accepting pause, never a flood of unauthenticated ones; and
// no wait lasts longer than maxWait.
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
