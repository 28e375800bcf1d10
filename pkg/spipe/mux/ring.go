package mux

import "github.com/spipe-dev/spipe/pkg/spipe/internal/pool"

// ring is a stream's receive buffer: the data frames brought in and the
// reader has not taken yet, as one circular buffer. It holds data bytes
// only, never frames (the read loop copies each frame's data in at once),
// so what a stream holds is its unread data, which its window bounds, in
// a buffer no larger than the stream's largest window: pooled, taken when
// data arrives, grown by doubling, and given back as soon as the reader
// has emptied it, so an idle stream holds none.
//
// A reader may write out a piece of the buffer without the stream's lock
// (pin), while the read loop appends behind it: appends never touch the
// pinned piece, and a buffer the read loop outgrows meanwhile is given
// back only once the reader unpins it.
type ring struct {
	box     *[]byte // the pooled buffer; nil when empty
	r, n    int     // where the data starts, and how much there is
	pinned  bool    // a reader is writing out buf[r:r+k] unlocked
	retired *[]byte // a buffer outgrown while pinned, to give back on unpin
}

// minRing is the smallest buffer a ring takes: enough for interactive
// traffic without growing.
const minRing = 16 << 10

func (q *ring) len() int { return q.n }

// write appends p, growing the buffer up to limit bytes if it must (the
// caller has checked that the stream's window allows p, so the data
// fits in limit).
func (q *ring) write(p []byte, limit int) {
	if len(p) == 0 {
		return
	}
	if q.box == nil || q.n+len(p) > len(*q.box) {
		q.grow(q.n+len(p), limit)
	}
	buf := *q.box
	w := (q.r + q.n) % len(buf)
	k := copy(buf[w:], p)
	copy(buf, p[k:])
	q.n += len(p)
}

// grow moves the data into a buffer of at least need bytes: a power of
// two from minRing, but no more than limit (and no less than need).
func (q *ring) grow(need, limit int) {
	size := minRing
	for size < need {
		size *= 2
	}
	size = max(min(size, limit), need)
	nb := pool.Get(size)
	if q.box != nil {
		q.read(*nb)
		if q.pinned {
			q.retired = q.box
		} else {
			pool.Put(q.box)
		}
	}
	q.box, q.r = nb, 0
}

// read copies the data (up to len(p)) into p without consuming it, and
// returns how much it copied.
func (q *ring) read(p []byte) int {
	if q.n == 0 {
		return 0
	}
	buf := *q.box
	k := copy(p[:min(len(p), q.n)], buf[q.r:min(len(buf), q.r+q.n)])
	if k < len(p) && k < q.n {
		k += copy(p[k:min(len(p), q.n)], buf)
	}
	return k
}

// head returns the data from its start up to the end of the buffer or of
// the data, whichever comes first: what one write can send.
func (q *ring) head() []byte {
	if q.n == 0 {
		return nil
	}
	buf := *q.box
	return buf[q.r:min(len(buf), q.r+q.n)]
}

// consume drops the first n bytes of the data (all of it if there is
// less: a reset may have discarded it under a pinned reader), and gives
// the buffer back once it is empty and no reader holds a piece of it.
func (q *ring) consume(n int) {
	q.n -= min(n, q.n)
	if q.n == 0 {
		q.r = 0
		if !q.pinned {
			q.release()
		}
		return
	}
	q.r = (q.r + n) % len(*q.box)
}

// pin marks the head as being written out without the lock; unpin ends
// that, giving back what was outgrown meanwhile, and the buffer itself if
// it is empty.
func (q *ring) pin() { q.pinned = true }

func (q *ring) unpin() {
	q.pinned = false
	if q.retired != nil {
		pool.Put(q.retired)
		q.retired = nil
	}
	if q.n == 0 {
		q.release()
	}
}

// release gives the buffer back, discarding any data (a reset stream).
// Not while pinned: unpin gives it back then.
func (q *ring) release() {
	q.n, q.r = 0, 0
	if q.box != nil && !q.pinned {
		pool.Put(q.box)
		q.box = nil
	}
}
