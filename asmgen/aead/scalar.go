package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// scalarChaCha computes one ChaCha block in general registers beside a
// vector kernel's rounds. Words 8-11, which only ever play the c part of a
// quarter round (c += d; b ^= c), live in memory; a quarter round loads its
// c into a temporary at its first c step, keeps it there for its second
// and stores it after, so no store-to-load forwarding lies on the
// dependency chain. The other twelve words and two temporaries take the
// fourteen allocatable general registers.
type scalarChaCha struct {
	in  Mem // the input words
	mem Mem // words 8-11
	x   [16]Op
	t   [2]GPVirtual
}

// newScalarChaCha copies the 16 input words at s to the stack.
func newScalarChaCha(s Mem) *scalarChaCha {
	c := &scalarChaCha{in: AllocLocal(64), mem: AllocLocal(16)}
	v := ZMM()
	VMOVDQU32(s, v)
	VMOVDQU32(v, c.in)
	w := XMM()
	VMOVDQU32(c.in.Offset(32), w)
	VMOVDQU32(w, c.mem)
	return c
}

// load loads the working words (after which every general register is
// taken).
func (c *scalarChaCha) load() {
	for i := range 16 {
		if i >= 8 && i < 12 {
			c.x[i] = c.mem.Offset(4 * (i - 8))
			continue
		}
		r := GP32()
		MOVL(c.in.Offset(4*i), r)
		c.x[i] = r
	}
	c.t = [2]GPVirtual{GP32(), GP32()}
}

// half returns the steps of four quarter rounds (columns or diagonals),
// two at a time, each step across the pair so that two chains sit side
// by side (the scheduler overlaps the pairs).
func (c *scalarChaCha) half(half [4][4]int) []func() {
	var out []func()
	for p := 0; p < 4; p += 2 {
		pair := half[p : p+2]
		for _, op := range c.steps() {
			for k, q := range pair {
				op, k := op, k
				x := c.x
				t := c.t[k]
				out = append(out, func() { op(x[q[0]], x[q[1]], x[q[2]], x[q[3]], t) })
			}
		}
	}
	return out
}

// steps are the quarter round's instructions; cm is c's memory word and t
// the temporary that holds it meanwhile.
func (c *scalarChaCha) steps() []func(a, b, cm, d Op, t GPVirtual) {
	return []func(a, b, cm, d Op, t GPVirtual){
		func(a, b, cm, d Op, t GPVirtual) { MOVL(cm, t) },
		func(a, b, cm, d Op, t GPVirtual) { ADDL(b, a) },
		func(a, b, cm, d Op, t GPVirtual) { XORL(a, d) },
		func(a, b, cm, d Op, t GPVirtual) { ROLL(U8(16), d) },
		func(a, b, cm, d Op, t GPVirtual) { ADDL(d, t) },
		func(a, b, cm, d Op, t GPVirtual) { XORL(t, b) },
		func(a, b, cm, d Op, t GPVirtual) { ROLL(U8(12), b) },
		func(a, b, cm, d Op, t GPVirtual) { ADDL(b, a) },
		func(a, b, cm, d Op, t GPVirtual) { XORL(a, d) },
		func(a, b, cm, d Op, t GPVirtual) { ROLL(U8(8), d) },
		func(a, b, cm, d Op, t GPVirtual) { ADDL(d, t) },
		func(a, b, cm, d Op, t GPVirtual) { XORL(t, b) },
		func(a, b, cm, d Op, t GPVirtual) { ROLL(U8(7), b) },
		func(a, b, cm, d Op, t GPVirtual) { MOVL(t, cm) },
	}
}

// key adds the input words 0-7 and returns the Poly1305 key as 64-bit
// words: r0, r1 (not yet clamped) and s0, s1.
func (c *scalarChaCha) key() (r0, r1, s0, s1 GPVirtual) {
	return polyKey(c.in, func(i int) GPVirtual { return c.x[i].(GPVirtual) })
}

// polyKey adds input words 0-7 (at in) to the block's words 0-7, word(i)
// in a general register, and joins them into the Poly1305 key as 64-bit
// words: r0, r1 (not yet clamped) and s0, s1.
func polyKey(in Mem, word func(i int) GPVirtual) (r0, r1, s0, s1 GPVirtual) {
	var w [8]GPVirtual
	for i := range 8 {
		w[i] = word(i)
		ADDL(in.Offset(4*i), w[i])
	}
	join := func(lo, hi GPVirtual) GPVirtual {
		SHLQ(U8(32), hi.As64())
		ORQ(hi.As64(), lo.As64())
		return lo.As64().(GPVirtual)
	}
	return join(w[0], w[1]), join(w[2], w[3]), join(w[4], w[5]), join(w[6], w[7])
}

// interleave emits a and b merged, in proportion to their lengths, so
// that two independent instruction streams share the scheduler's window.
func interleave(a, b []func()) {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		// emit from whichever is behind its share
		if j >= len(b) || (i < len(a) && i*len(b) <= j*len(a)) {
			a[i]()
			i++
		} else {
			b[j]()
			j++
		}
	}
}
