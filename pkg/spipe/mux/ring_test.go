package mux

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRingKeepsOrderAcrossWrapsAndGrowth: data written in pieces of every
// size comes out in order, across the buffer's end and its growth, and
// the buffer is never larger than the limit nor kept once empty.
func TestRingKeepsOrderAcrossWrapsAndGrowth(t *testing.T) {
	var q ring
	var want, got []byte
	limit := 256 << 10
	next := byte(0)
	for i := range 2000 {
		n := (i * 7919) % 9000
		if q.len()+n <= limit {
			p := make([]byte, n)
			for j := range p {
				p[j], next = next, next+1
			}
			q.write(p, limit)
			want = append(want, p...)
		}
		if q.box != nil {
			require.LessOrEqual(t, len(*q.box), limit)
		}
		take := min(q.len(), (i*104729)%12000)
		buf := make([]byte, take)
		k := q.read(buf)
		require.Equal(t, take, k)
		q.consume(k)
		got = append(got, buf...)
	}
	buf := make([]byte, q.len())
	q.consume(q.read(buf))
	got = append(got, buf...)
	assert.True(t, bytes.Equal(want, got), "the data came out in order")
	assert.Nil(t, q.box, "an empty ring keeps no buffer")
}

// TestRingGrowsUnderAPinnedHead: a reader writing out the head without the
// lock (pinned) keeps its piece valid while the ring grows; the old
// buffer is given back only on unpin, and the data stays in order.
func TestRingGrowsUnderAPinnedHead(t *testing.T) {
	var q ring
	first := bytes.Repeat([]byte{1}, 1000)
	q.write(first, 1<<20)
	head := q.head()
	q.pin()
	old := q.box
	q.write(bytes.Repeat([]byte{2}, 100_000), 1<<20) // grows past minRing
	assert.NotSame(t, old, q.box, "the ring grew into a new buffer")
	assert.Same(t, old, q.retired, "the pinned buffer waits for unpin")
	assert.Equal(t, first, head, "the pinned piece is intact")
	q.consume(len(head))
	q.unpin()
	assert.Nil(t, q.retired)
	b := make([]byte, q.len())
	q.consume(q.read(b))
	assert.Equal(t, bytes.Repeat([]byte{2}, 100_000), b)
	assert.Nil(t, q.box)

	// A release (a reset) while pinned discards the data and keeps the
	// buffer until unpin; the reader's consume after it takes nothing.
	q.write(first, 1<<20)
	q.pin()
	q.release()
	q.consume(len(first))
	assert.Zero(t, q.len())
	q.unpin()
	assert.Nil(t, q.box)
}
