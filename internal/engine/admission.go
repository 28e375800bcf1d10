package engine

import (
	"container/heap"
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"
)

// Why the admission table cut a handshake short. Reason names them
// "evicted", "hello_timeout" and "shutdown".
var (
	errEvicted      = errors.New("pending handshake evicted to admit a newer connection")
	errHelloTimeout = errors.New("first message not complete within its deadline")
)

// cutError is the error of a handshake the admission table cut: why it
// was cut, and what the handshake saw when its socket closed under it.
type cutError struct{ cause, err error }

func (e *cutError) Error() string   { return e.cause.Error() + " (" + e.err.Error() + ")" }
func (e *cutError) Unwrap() []error { return []error{e.cause, e.err} }

// admission is the table of accepted connections whose handshake has not
// yet proven the key. Accepting never waits for it: a new connection always
// gets a place, and when it needs one that is taken, the handshake cut is
// the oldest of the source the new connection comes from, if that source
// is at its cap, or else the oldest of the source holding the most places.
// So a flood from a few sources only ever cuts its own handshakes, and
// a flood from many must open max new connections while an honest
// handshake runs to cut it. The table bounds the file descriptors
// unauthenticated peers hold to max.
type admission struct {
	max, perSource int
	hello          helloRule
	log            *slog.Logger

	mu      sync.Mutex
	n       int               // tickets in the table
	seq     uint64            // arrival order, for "oldest"
	sources map[source]*queue // sources with at least one ticket
	busiest queueHeap         // the same queues, busiest (then oldest) first
	closed  error             // set at shutdown: newcomers are cut at once
	// The warning about evictions is written at most every
	// limitWarnEvery, with the count since the last one.
	evictions int
	lastWarn  time.Time
}

// ticket is a connection's place in the table, from accept until its
// handshake succeeds, fails or is cut.
type ticket struct {
	a          *admission
	conn       net.Conn // the accepted socket
	hello      *helloConn
	q          *queue // nil once out of the table
	seq        uint64
	prev, next *ticket // in q, oldest first
	cause      error   // why it was cut, if it was; under a.mu
}

// queue is one source's tickets, oldest first.
type queue struct {
	src            source
	oldest, newest *ticket
	n              int
	index          int // in admission.busiest
}

func newAdmission(max, perSource int, hello helloRule, log *slog.Logger) *admission {
	return &admission{max: max, perSource: min(perSource, max), hello: hello, log: log, sources: map[source]*queue{}}
}

// add gives c a ticket, cutting another handshake if the place it needs is
// taken. After shutdown the ticket is cut at once.
func (a *admission) add(c net.Conn) *ticket {
	t := &ticket{a: a, conn: c}
	src := sourceOf(c)
	var victim *ticket
	var warn bool
	a.mu.Lock()
	if a.closed != nil {
		t.cause = a.closed
		a.mu.Unlock()
		t.abort()
		return t
	}
	if q := a.sources[src]; q != nil && q.n >= a.perSource {
		victim = q.oldest
	} else if a.n >= a.max {
		victim = a.busiest[0].oldest
	}
	var busiest source
	if victim != nil {
		busiest = victim.q.src
		a.unlink(victim)
		victim.cause = errEvicted
		a.evictions++
		if now := time.Now(); now.Sub(a.lastWarn) >= limitWarnEvery {
			warn, a.lastWarn = true, now
		}
	}
	a.link(t, src)
	evictions := a.evictions
	if warn {
		a.evictions = 0
	}
	a.mu.Unlock()
	if victim != nil {
		victim.abort()
		if warn {
			a.log.Warn("pending handshakes cut to admit new connections", "cut", evictions,
				"source", busiest, "max_pending", a.max, "max_pending_per_source", a.perSource)
		}
	}
	if a.hello.size > 0 {
		t.hello = a.hello.watch(c, func() { t.cut(errHelloTimeout) })
	}
	return t
}

// link appends t to its source's queue.
func (a *admission) link(t *ticket, src source) {
	q := a.sources[src]
	if q == nil {
		q = &queue{src: src, index: -1}
		a.sources[src] = q
	}
	a.seq++
	t.seq, t.q, t.prev = a.seq, q, q.newest
	if q.newest != nil {
		q.newest.next = t
	} else {
		q.oldest = t
	}
	q.newest = t
	q.n++
	a.n++
	if q.index < 0 {
		heap.Push(&a.busiest, q)
	} else {
		heap.Fix(&a.busiest, q.index)
	}
}

// unlink takes t out of the table; a source left without tickets goes.
func (a *admission) unlink(t *ticket) {
	q := t.q
	if t.prev != nil {
		t.prev.next = t.next
	} else {
		q.oldest = t.next
	}
	if t.next != nil {
		t.next.prev = t.prev
	} else {
		q.newest = t.prev
	}
	t.prev, t.next = nil, nil
	t.q = nil
	q.n--
	a.n--
	if q.n == 0 {
		heap.Remove(&a.busiest, q.index)
		delete(a.sources, q.src)
	} else {
		heap.Fix(&a.busiest, q.index)
	}
}

// close cuts every ticket with cause and every later one at once.
func (a *admission) close(cause error) {
	var cut []*ticket
	a.mu.Lock()
	a.closed = cause
	for _, q := range a.sources {
		for t := q.oldest; t != nil; t = t.next {
			t.cause, t.q = cause, nil
			cut = append(cut, t)
		}
	}
	clear(a.sources)
	a.busiest, a.n = nil, 0
	a.mu.Unlock()
	for _, t := range cut {
		t.abort()
	}
}

// len returns how many handshakes hold a place.
func (a *admission) len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

// secureConn is the connection to run the handshake on: c itself, or c
// watched for its first message.
func (t *ticket) secureConn(c net.Conn) net.Conn {
	if t == nil || t.hello == nil {
		return c
	}
	return t.hello
}

// leave takes t out of the table once its handshake is over, and returns
// why it was cut if it was (its socket is then closed, whatever the
// handshake made of it). A nil ticket has nothing to leave.
func (t *ticket) leave() error {
	if t == nil {
		return nil
	}
	t.hello.stop()
	a := t.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if t.cause != nil {
		return t.cause
	}
	if t.q != nil {
		a.unlink(t)
	}
	return nil
}

// cut takes t out of the table with cause and closes its socket, unless
// its handshake is already over.
func (t *ticket) cut(cause error) {
	a := t.a
	a.mu.Lock()
	if t.q == nil {
		a.mu.Unlock()
		return
	}
	a.unlink(t)
	t.cause = cause
	a.mu.Unlock()
	t.abort()
}

// abort resets the socket, so the peer sees at once that it was cut and
// the server keeps no TIME_WAIT for it.
func (t *ticket) abort() { abortConn(rawConn{t.conn}) }

// queueHeap orders the sources busiest first; of two as busy, the one
// with the older ticket first, so that among equals the oldest handshake
// is cut.
type queueHeap []*queue

func (h queueHeap) Len() int { return len(h) }
func (h queueHeap) Less(i, j int) bool {
	return h[i].n > h[j].n || h[i].n == h[j].n && h[i].oldest.seq < h[j].oldest.seq
}
func (h queueHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *queueHeap) Push(x any) {
	q := x.(*queue)
	q.index = len(*h)
	*h = append(*h, q)
}
func (h *queueHeap) Pop() any {
	old := *h
	q := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	q.index = -1
	return q
}
