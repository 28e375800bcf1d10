package engine

import (
	"sync"
	"sync/atomic"
	"time"
)

// Idle workers wait this long for more work before they exit, and no more
// than maxIdleWorkers of them wait at once: enough to carry a burst of
// short connections from one to the next, few enough that the stacks they
// keep stay small beside the connections' buffers.
const (
	workerIdle     = 2 * time.Second
	maxIdleWorkers = 128
)

// workers runs functions on goroutines that outlive them. A connection's
// goroutines go deep (handshake, dial, AEAD), and a fresh goroutine's
// stack grows by copying every time; a worker grows its stack once and
// keeps it. That measured 12-17% of the CPU a short connection costs
// (BenchmarkConnection).
type workers struct {
	work    chan func()
	quit    chan struct{}
	idle    atomic.Int32 // workers waiting for work
	live    atomic.Int32 // workers started and not yet returned
	wg      sync.WaitGroup
	linger  time.Duration // how long an idle worker waits
	maxIdle int32         // how many may wait at once
}

func newWorkers(linger time.Duration, maxIdle int) *workers {
	return &workers{work: make(chan func()), quit: make(chan struct{}), linger: linger, maxIdle: int32(maxIdle)}
}

// run calls f on an idle worker, or on a new one if none is idle; on a
// nil pool (Handle's single connection), on a goroutine of its own.
func (w *workers) run(f func()) {
	if w == nil {
		go f()
		return
	}
	select {
	case w.work <- f:
	default:
		w.wg.Add(1)
		w.live.Add(1)
		go w.loop(f)
	}
}

func (w *workers) loop(f func()) {
	defer w.wg.Done()
	defer w.live.Add(-1)
	var t *time.Timer
	for {
		f()
		f = nil // so the finished function's closure can be collected
		if w.idle.Add(1) > w.maxIdle {
			w.idle.Add(-1)
			return
		}
		if t == nil {
			t = time.NewTimer(w.linger)
			defer t.Stop()
		} else {
			t.Reset(w.linger)
		}
		select {
		case f = <-w.work:
			w.idle.Add(-1)
		case <-t.C:
			w.idle.Add(-1)
			return
		case <-w.quit:
			w.idle.Add(-1)
			return
		}
	}
}

// stop ends the idle workers and waits for every worker to return; the
// caller must already have seen every function it ran finish.
func (w *workers) stop() {
	close(w.quit)
	w.wg.Wait()
}
