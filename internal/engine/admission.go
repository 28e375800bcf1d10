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
// yet proven the key; it bounds the sockets such peers hold to max.
// Accepting never waits for it: a new connection always gets a place, and
// when the place it needs is taken, another handshake is cut. If the
// newcomer's source is at its cap, the handshake cut is one of that
// source's; otherwise one of the source holding the most places (then the
// most waiting for their first message, then the oldest). Either way it
// is the source's oldest still waiting for its first message, or its
// oldest if none is. A first message counts as in once it is in the
// socket, read or not (where the system says how much a socket holds). So
// a flood from a few sources only ever cuts its own handshakes, and peers
// that never send a whole first message, from however many addresses,
// cannot cut a handshake that has sent one.
type admission struct {
	max, perSource int
	hello          helloRule
	log            *slog.Logger

	mu      sync.Mutex
	n       int               // tickets in the table
	seq     uint64            // order of arrival (or of the first message), for "oldest"
	sources map[source]*queue // sources with at least one ticket
	busiest queueHeap         // the same queues, the next to lose a ticket first
	closed  error             // set at shutdown: newcomers are cut at once
	// The warning about evictions is written at most every
	// limitWarnEvery, with the count since the last one.
	evictions int
	lastWarn  time.Time
}

// ticket is a connection's place in the table, from accept until its
// handshake succeeds, fails or is cut.
type ticket struct {
	a        *admission
	conn     net.Conn  // the accepted socket
	accepted time.Time // when, for the first-message deadline
	// header is set while the connection, from a trusted load balancer,
	// owes its PROXY header: it counts against the balancer until the
	// header names the client (move). Under a.mu once in the table.
	header     bool
	proxied    bool       // the header was read: the handshake reads through the conn it made
	hello      *helloConn // set under a.mu, before the ticket is in the table (add) or while it is (move)
	q          *queue     // nil once out of the table
	heard      bool       // its first message is in (it is in q.lists[heard])
	seq        uint64
	prev, next *ticket // in its list, oldest first
	cause      error   // why it was cut, if it was; under a.mu
}

// queue is one source's tickets: those waiting for their first message
// (lists[0]) and those past it (lists[1]), each oldest first.
type queue struct {
	src   source
	lists [2]ticketList
	n     int // tickets
	heard int // of which past their first message
	index int // in admission.busiest
}

type ticketList struct{ oldest, newest *ticket }

// waiting is how many of q's tickets wait for their first message.
func (q *queue) waiting() int { return q.n - q.heard }

// next is the ticket q gives up first: its oldest still waiting for a
// first message, or else its oldest.
func (q *queue) next() *ticket {
	if t := q.lists[0].oldest; t != nil {
		return t
	}
	return q.lists[1].oldest
}

func newAdmission(max, perSource int, hello helloRule, log *slog.Logger) *admission {
	return &admission{max: max, perSource: perSource, hello: hello, log: log, sources: map[source]*queue{}}
}

// add gives c a ticket, cutting another handshake if the place it needs is
// taken. After shutdown the ticket is cut at once. With header, c comes
// from a trusted load balancer and owes a PROXY header first: its first
// message is watched for only once move has read it.
func (a *admission) add(c net.Conn, header bool) *ticket {
	t := &ticket{a: a, conn: c, accepted: time.Now(), header: header}
	src := sourceOf(c)
	a.mu.Lock()
	if a.closed != nil {
		t.cause = a.closed
		a.mu.Unlock()
		t.abort()
		return t
	}
	room := a.makeRoom(src, true)
	// The watch is in place before the ticket is in the table: from then
	// on, a newcomer's makeRoom on another goroutine may ask whether its
	// first message is in. (Its callbacks take a.mu, so they wait for the
	// ticket to be linked.)
	if a.hello.size > 0 && !header {
		t.hello = a.hello.watch(c, t.accepted, 0, t.firstMessageIn, t.late)
	}
	a.link(t, a.queue(src), false)
	a.mu.Unlock()
	room.finish(a)
	return t
}

// move charges t, until now its load balancer's, to src, the client the
// balancer's PROXY header named, as if the connection had come from src
// (cutting one of src's handshakes if src is at its cap), and watches c,
// the socket after the header, for the rest of the first message: got
// bytes of it came with the header. It returns what to read the rest
// through: c, or the watch over it. A ticket cut meanwhile stays cut.
func (t *ticket) move(src source, c net.Conn, got int) net.Conn {
	a := t.a
	t.proxied = true
	var h *helloConn
	if a.hello.size > 0 {
		h = a.hello.watch(c, t.accepted, got, t.firstMessageIn, t.late)
	}
	a.mu.Lock()
	t.header = false
	if t.q == nil {
		a.mu.Unlock()
		h.stop()
		return c
	}
	t.hello = h
	var room eviction
	if src != t.q.src {
		a.unlink(t)
		room = a.makeRoom(src, false)
		a.link(t, a.queue(src), false)
	}
	a.mu.Unlock()
	room.finish(a)
	if h == nil {
		return c
	}
	if h.arrived() {
		h.stop()
		t.firstMessageIn()
	}
	return h
}

// eviction is the handshake makeRoom cut, if any, for finish to close
// and report once the table is unlocked.
type eviction struct {
	victim *ticket
	from   source
	warn   bool
	count  int // evictions to report with the warning
}

// makeRoom cuts a handshake if a connection from src needs its place: one
// of src's own if src is at its cap, or else, for a newcomer to a full
// table, one of the source that loses first. A victim waiting for its
// first message may have it in its socket, not yet read: then it joins
// those past it, and another is chosen; each ticket moves at most once.
// Called with a.mu held.
func (a *admission) makeRoom(src source, newcomer bool) (e eviction) {
	var victim *ticket
	for {
		victim = nil
		if q := a.sources[src]; q != nil && q.n >= a.perSource {
			victim = q.next()
		} else if newcomer && a.n >= a.max {
			victim = a.busiest[0].next()
		}
		if victim == nil || victim.heard || !victim.arrived() {
			break
		}
		a.promote(victim)
	}
	if victim == nil {
		return e
	}
	e.victim, e.from = victim, victim.q.src
	a.unlink(victim)
	victim.cause = errEvicted
	a.evictions++
	if now := time.Now(); now.Sub(a.lastWarn) >= limitWarnEvery {
		e.warn, e.count, a.lastWarn = true, a.evictions, now
		a.evictions = 0
	}
	return e
}

// finish closes the evicted handshake's socket and writes the warning
// that was due, outside the table's lock.
func (e eviction) finish(a *admission) {
	if e.victim == nil {
		return
	}
	e.victim.abort()
	if e.warn {
		a.log.Warn("pending handshakes cut to admit new connections", "cut", e.count,
			"source", e.from, "max_pending", a.max, "max_pending_per_source", a.perSource)
	}
}

// queue returns src's queue, made if src holds no place yet.
func (a *admission) queue(src source) *queue {
	q := a.sources[src]
	if q == nil {
		q = &queue{src: src, index: -1}
		a.sources[src] = q
	}
	return q
}

// link appends t to q's list of tickets waiting for their first message,
// or past it.
func (a *admission) link(t *ticket, q *queue, heard bool) {
	l := &q.lists[b2i(heard)]
	a.seq++
	t.seq, t.q, t.heard, t.prev = a.seq, q, heard, l.newest
	if l.newest != nil {
		l.newest.next = t
	} else {
		l.oldest = t
	}
	l.newest = t
	q.n++
	if heard {
		q.heard++
	}
	a.n++
	if q.index < 0 {
		heap.Push(&a.busiest, q)
	} else {
		heap.Fix(&a.busiest, q.index)
	}
}

// unlink takes t out of the table; a source left without tickets goes.
func (a *admission) unlink(t *ticket) {
	a.detach(t)
	q := t.q
	t.q = nil
	if q.n == 0 {
		heap.Remove(&a.busiest, q.index)
		delete(a.sources, q.src)
	} else {
		heap.Fix(&a.busiest, q.index)
	}
}

// detach takes t out of its list and counts; the caller fixes the heap.
func (a *admission) detach(t *ticket) {
	q := t.q
	l := &q.lists[b2i(t.heard)]
	if t.prev != nil {
		t.prev.next = t.next
	} else {
		l.oldest = t.next
	}
	if t.next != nil {
		t.next.prev = t.prev
	} else {
		l.newest = t.prev
	}
	t.prev, t.next = nil, nil
	q.n--
	if t.heard {
		q.heard--
	}
	a.n--
}

// arrived reports whether t's first message is in, read or not (see
// helloConn.arrived); while t owes its PROXY header, whether the socket
// holds the whole header and the first message after it. Called with
// a.mu held.
func (t *ticket) arrived() bool {
	if t.header {
		return t.a.hello.size > 0 && headerAndMessageIn(t.conn, t.a.hello.size)
	}
	return t.hello.arrived()
}

// late cuts t for want of its first message by the deadline.
func (t *ticket) late() { t.cut(errHelloTimeout) }

// firstMessageIn moves t among its source's tickets past their first
// message, which the source gives up only after those still waiting.
func (t *ticket) firstMessageIn() {
	a := t.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if t.q != nil && !t.heard {
		a.promote(t)
	}
}

// promote moves t to its source's tickets past their first message.
func (a *admission) promote(t *ticket) {
	q := t.q
	a.detach(t)
	a.link(t, q, true)
}

// close cuts every ticket with cause and every later one at once.
func (a *admission) close(cause error) {
	var cut []*ticket
	a.mu.Lock()
	a.closed = cause
	for _, q := range a.sources {
		for _, l := range q.lists {
			for t := l.oldest; t != nil; t = t.next {
				t.cause, t.q = cause, nil
				cut = append(cut, t)
			}
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
// watched for its first message. After a PROXY header c is the connection
// move watched already.
func (t *ticket) secureConn(c net.Conn) net.Conn {
	if t == nil || t.hello == nil || t.proxied {
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

// queueHeap orders the sources by which loses a ticket first when the
// table is full: the one with the most tickets; of those, the one with
// the most waiting for their first message; then the one whose next
// ticket to go is the oldest. The count comes first so that a source
// holding one handshake never loses it while another holds two, whatever
// their first messages; the first messages decide among equals, which is
// where a flood from as many addresses as the table has places puts
// everyone.
type queueHeap []*queue

func (h queueHeap) Len() int { return len(h) }
func (h queueHeap) Less(i, j int) bool {
	x, y := h[i], h[j]
	if x.n != y.n {
		return x.n > y.n
	}
	if x.waiting() != y.waiting() {
		return x.waiting() > y.waiting()
	}
	return x.next().seq < y.next().seq
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

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
