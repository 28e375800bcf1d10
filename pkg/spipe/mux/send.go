package mux

import (
	"io"
	"sync"
	"sync/atomic"
)

// Fairness between streams. The library queues every message of every
// stream in one first-in, first-out line to the carrier, and a stream may
// have a whole window in flight: a bulk stream alone could keep that much
// ahead of an interactive stream's next message. Where the link is the
// bottleneck, two things keep the line on this side short. Writes bigger
// than smallWrite wait while more than queueLimit bytes of data are
// queued and not yet written to the carrier (small writes never wait:
// they are what latency is measured on). And the carrier's socket holds
// at most notSentLowat bytes not yet sent (TCP_NOTSENT_LOWAT, where the
// system has it), so the line builds up here, where the limit applies,
// not in the kernel. Where the receiver is the bottleneck (a CPU-bound
// loopback pipe), the data waits in its socket instead, bounded only by
// the window: hence the default MaxStreamWindow, the smallest. (A limit
// of one message made the writer and the library's sender hand over at
// every message, costing bulk throughput for no latency measured on
// loopback; two messages do not.)
const (
	queueLimit   = 128 << 10
	smallWrite   = 4 << 10
	notSentLowat = 32 << 10
)

// sendQueue counts the data handed to the library and not yet written to
// the carrier.
type sendQueue struct {
	queued  atomic.Int64
	waiters atomic.Int32
	mu      sync.Mutex
	cond    *sync.Cond
	closed  bool
}

func newSendQueue() *sendQueue {
	q := &sendQueue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// wait returns once fewer than queueLimit bytes are queued, or the
// session has ended.
func (q *sendQueue) wait() {
	if q.queued.Load() < queueLimit {
		return
	}
	q.mu.Lock()
	q.waiters.Add(1)
	for q.queued.Load() >= queueLimit && !q.closed {
		q.cond.Wait()
	}
	q.waiters.Add(-1)
	q.mu.Unlock()
}

// add counts n bytes handed to the library.
func (q *sendQueue) add(n int) { q.queued.Add(int64(n)) }

// sent counts n bytes of data written to the carrier.
func (q *sendQueue) sent(n int) {
	if q.queued.Add(-int64(n)) < queueLimit && q.waiters.Load() > 0 {
		q.mu.Lock()
		q.cond.Broadcast()
		q.mu.Unlock()
	}
}

// close releases every waiter for good.
func (q *sendQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
}

// Write writes p to the stream, blocking while the peer's window for it
// is full. It fails after CloseWrite, Reset or Close, and once the peer
// reset the stream or the session ended.
func (st *Stream) Write(p []byte) (int, error) {
	q := st.sess.queue
	total := 0
	for len(p) > 0 {
		n := min(len(p), st.sess.msgData)
		if n > smallWrite {
			q.wait()
		}
		m, err := st.s.Write(p[:n])
		q.add(m)
		total += m
		if err != nil {
			return total, st.wrap(err)
		}
		p = p[n:]
	}
	return total, nil
}

// ReadFrom implements io.ReaderFrom: io.Copy into a stream reads r in
// pieces that each fit one message (one carrier frame), at most 64 KiB,
// where a copy loop's 64 KiB could cost a second, tiny message per read
// on a carrier with smaller frames. r's io.EOF ends it without error (and
// without CloseWrite).
func (st *Stream) ReadFrom(r io.Reader) (int64, error) {
	bp := messageBufs.Get().(*[]byte)
	defer messageBufs.Put(bp)
	buf := (*bp)[:min(len(*bp), st.sess.msgData)]
	var n int64
	for {
		m, rerr := r.Read(buf)
		if m > 0 {
			w, err := st.Write(buf[:m])
			n += int64(w)
			if err != nil {
				return n, err
			}
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, rerr
		}
	}
}

// messageBufs hold ReadFrom's pieces: 64 KiB, what a default frame
// holds. A carrier with 1 MiB frames still gets messages of at most 64 KiB
// from ReadFrom: that is what the bench-pipe figures for --mux measured.
var messageBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}
