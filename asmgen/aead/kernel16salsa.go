package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

// Message lengths of the 16-block secretbox kernels: block 0 covers the
// message's first 32 bytes after the Poly1305 key and blocks 1-16 the next
// 1024; the lanes' Poly1305 needs at least 17 whole ciphertext blocks (one
// full group of 16 before the last).
const (
	max16Secretbox = 32 + 16*64
	min16Secretbox = 17 * 16
)

// kernel16Secretbox emits a seal or an open of secretbox messages of
// min16Secretbox to max16Secretbox bytes: block 0 in general registers
// beside the rounds of blocks 1-16 in a vertical ZMM group (kernel16's
// shape, with Salsa20 for ChaCha), and Poly1305 in vector lanes over a
// frame copy of the ciphertext's whole 16-byte blocks, its last partial
// block (NaCl's padding: a 1 byte, no 2^128 bit) in general registers
// after them. Secretbox has no additional data and no length block.
func kernel16Secretbox(name string, open bool) {
	sig := secretboxSignature
	if open {
		sig += " bool"
	}
	TEXT(name, 0, sig)
	Pragma("noescape")
	what := "XSalsa20-Poly1305 (NaCl secretbox)"
	if open {
		Doc(fmt.Sprintf("%s opens %s messages of %d to %d bytes: it reports", name, what, min16Secretbox, max16Secretbox),
			"whether tag is theirs and, only if it is, writes the plaintext to dst.")
	} else {
		Doc(fmt.Sprintf("%s seals %s messages of %d to %d bytes.", name, what, min16Secretbox, max16Secretbox))
	}

	// The ciphertext in groups of 256 bytes (the lanes may read a whole
	// group past its last block); open keeps the key stream until the tag
	// is checked; block 0's message key stream waits in ks0.
	var lay layout64
	ctOff := lay.take(max16Secretbox + 256)
	ksOff := -1
	if open {
		ksOff = lay.take(max16Secretbox)
	}
	ks0 := lay.take(32)
	t := newPowerTable(&lay)
	f := newFrame64(lay.next)
	count := AllocLocal(8)
	pre := AllocLocal(24)

	// The pieces of message key stream: block 0's upper half, then blocks
	// 1-16, each from byte 64·b - 32 of the message.
	offs := []piece{{nil, 0, 32}}
	for b := 1; b <= 16; b++ {
		offs = append(offs, piece{nil, 64*b - 32, 64})
	}

	{
		b := f.base()
		if open {
			ciphertextToFrame(b, ctOff, max16Secretbox)
		}
		t.zeroTail(b)
		z := GP64()
		XORQ(z, z)
		for i := range 3 {
			MOVQ(z, pre.Offset(8*i))
		}
	}

	sp := Mem{Base: Load(Param("s"), GP64())}
	sc := newScalarSalsa(sp)
	g := newSalsaVertical(sp, 1)
	l := newLanes(t)
	{
		r := Load(Param("rounds"), GP64())
		SHRQ(U8(1), r)
		MOVQ(r, count)
	}
	sc.load()

	Comment("The double rounds, block 0's beside the group's.")
	Label(name + "_rounds")
	for _, diag := range []bool{false, true} {
		interleave(g.half(diag), sc.half(diag))
	}
	DECQ(count)
	JNZ(LabelRef(name + "_rounds"))

	Comment("Block 0: the one-time key and the message's first 32 bytes of key stream.")
	var k key
	{
		b := f.base()
		k = newKey(sc.finish(b.Offset(ks0)))
	}

	Comment("Key stream out (seal: XORed, to dst and the frame; open: kept).")
	g.feedForward()
	{
		b := f.base()
		out := func(pc piece) { keyStreamPiece(b, pc, open, ksOff, ctOff) }
		y := YMM()
		VMOVDQU64(b.Offset(ks0), y)
		out(piece{y, 0, 32})
		g.pieces(out)
	}

	Comment("Poly1305 over the ciphertext's whole blocks in vector lanes, its last partial block after them.")
	t.fill(f, k, l.k)
	full, kLast, tmp := GP64(), GP64(), GP64()
	{
		// blocks k = n/16; full = (k-1)/16; kLast = k - 16·full
		Load(Param("src").Len(), kLast)
		SHRQ(U8(4), kLast)
		MOVQ(kLast, full)
		DECQ(full)
		SHRQ(U8(4), full)
		MOVQ(full, tmp)
		SHLQ(U8(4), tmp)
		SUBQ(tmp, kLast)
	}
	h0, h1, h2 := l.macLanes(name, f, ctOff, pre, full, kLast, 4)
	a := acc{h0, h1, h2}
	{
		ptr, rest := GP64(), GP64()
		b := f.base()
		Load(Param("src").Len(), rest)
		MOVQ(rest, ptr)
		ANDQ(I8(-16), ptr)
		ADDQ(b.Base, ptr)
		ADDQ(U32(ctOff), ptr)
		ANDQ(U8(15), rest)
		a.last(k, ptr, rest, name+"_last")
	}

	var b Mem
	if open {
		b = f.base()
	}
	tagged(name, a, k, open, offs, func(pc piece) VecVirtual {
		v := vecOf(pc.width)
		VMOVDQU64(b.Offset(ksOff+pc.off), v)
		VPXORD(b.Offset(ctOff+pc.off), v, v)
		return v
	}, func() {
		b := f.base()
		zero := ZMM()
		VPXORD(zero, zero, zero)
		for off := 0; off < max16Secretbox; off += 64 {
			VMOVDQU64(zero, b.Offset(ksOff+off))
		}
		VMOVDQU64(zero.AsY(), b.Offset(ks0))
	})
}

// salsaVertical is 16 Salsa20 blocks in the vertical layout on ZMM, as in
// asmgen/salsa's salsaAVX512x16 but with the whole first double round run
// (no precomputed part): register i holds word i of blocks
// first..first+15, one per 32-bit lane, and each quarter round has a
// scratch register of its own. The feed-forward adds the input words as
// broadcast memory operands and the per-lane counters from the frame.
type salsaVertical struct {
	first int
	x     [16]Register
	t     [4]Register
	ctr   Mem
}

// The Salsa20 quarter rounds as word indices (a, b, c, d): the column
// round, then the row round. A quarter round updates b, c, d, a in turn,
// each with the rotated sum of the two words updated just before it.
var (
	salsaColumns = [4][4]int{{0, 4, 8, 12}, {5, 9, 13, 1}, {10, 14, 2, 6}, {15, 3, 7, 11}}
	salsaRows    = [4][4]int{{0, 1, 2, 3}, {5, 6, 7, 4}, {10, 11, 8, 9}, {15, 12, 13, 14}}
)

// salsaSteps returns the four steps of the quarter round (a, b, c, d) as
// (x, y, z): x ^= (y + z) <<< salsaRotations[step].
func salsaSteps(q [4]int) [4][3]int {
	a, b, c, d := q[0], q[1], q[2], q[3]
	return [4][3]int{{b, a, d}, {c, b, a}, {d, c, b}, {a, d, c}}
}

// newSalsaVertical loads the state at s for blocks first..first+15 (the
// counter, word 8, stays below 2^32 - 16: secretbox starts it at 0).
func newSalsaVertical(s Mem, first int) *salsaVertical {
	v := &salsaVertical{first: first, ctr: AllocLocal(64)}
	for i := range v.x {
		v.x[i] = ZMM()
		VPBROADCASTD(s.Offset(4*i), v.x[i])
	}
	VPADDD(arx.LaneIndex(), v.x[8], v.x[8])
	if first != 0 {
		VPADDD(arx.Splat(first), v.x[8], v.x[8])
	}
	VMOVDQU32(v.x[8], v.ctr)
	for q := range v.t {
		v.t[q] = ZMM()
	}
	return v
}

// half returns a column (or, diag, a row) round: each step of the four
// quarter rounds side by side.
func (v *salsaVertical) half(diag bool) (round []func()) {
	qs := salsaColumns
	if diag {
		qs = salsaRows
	}
	x := v.x
	for s := range 4 {
		for q, qr := range qs {
			st, t := salsaSteps(qr)[s], v.t[q]
			round = append(round, func() { VPADDD(x[st[1]], x[st[2]], t) })
		}
		for q := range qs {
			t := v.t[q]
			round = append(round, func() { VPROLD(U8(salsaRotations[s]), t, t) })
		}
		for q, qr := range qs {
			st, t := salsaSteps(qr)[s], v.t[q]
			round = append(round, func() { VPXORD(t, x[st[0]], x[st[0]]) })
		}
	}
	return round
}

// feedForward needs the state pointer again: the scalar block beside the
// rounds leaves no register to keep it in.
func (v *salsaVertical) feedForward() {
	s := Mem{Base: Load(Param("s"), GP64())}
	for i := range v.x {
		if i == 8 {
			VPADDD(v.ctr, v.x[i], v.x[i])
			continue
		}
		VPADDD_BCST(s.Offset(4*i), v.x[i], v.x[i])
	}
}

// pieces: block b of the group is secretbox's message key stream from
// 64·(first+b) - 32 (block 0's first 32 bytes are the Poly1305 key).
func (v *salsaVertical) pieces(emit func(piece)) {
	for b, blk := range arx.Transpose16(arx.AVX512, v.x[:]) {
		emit(piece{blk, 64*(v.first+b) - 32, 64})
	}
}

// scalarSalsa computes one Salsa20 block in general registers beside a
// vector group's rounds, as scalarChaCha does ChaCha's. Words 2, 7, 8 and
// 13 are the c of their quarter round in both the column and the row
// round (c ^= (b + a) <<< 9, then read by the last two steps); they live
// in memory, and a quarter round loads its c into a temporary at its
// start (its old value is needed only at the second step, so the load is
// off the dependency chain) and stores it at its end. The twelve other
// words and two temporaries (c and the steps' rotated sums) take the
// fourteen allocatable general registers; the quarter rounds are emitted
// one after another, and register renaming lets them overlap.
type scalarSalsa struct {
	in  Mem // the input words
	mem Mem // words 2, 7, 8, 13 at memSlot
	x   [16]Op
	c   GPVirtual
	t   GPVirtual
}

// memWords are the words kept in memory, in the order of their slots.
var memWords = [4]int{2, 7, 8, 13}

// memSlot returns the slot in scalarSalsa.mem of word i, if it is one of
// memWords.
func memSlot(i int) (int, bool) {
	for slot, w := range memWords {
		if w == i {
			return slot, true
		}
	}
	return 0, false
}

// newScalarSalsa copies the 16 input words at s to the stack.
func newScalarSalsa(s Mem) *scalarSalsa {
	c := &scalarSalsa{in: AllocLocal(64), mem: AllocLocal(16)}
	v := ZMM()
	VMOVDQU32(s, v)
	VMOVDQU32(v, c.in)
	for slot, w := range memWords {
		t := GP32()
		MOVL(c.in.Offset(4*w), t)
		MOVL(t, c.mem.Offset(4*slot))
	}
	return c
}

// load loads the working words (after which every general register is
// taken).
func (c *scalarSalsa) load() {
	for i := range 16 {
		if slot, ok := memSlot(i); ok {
			c.x[i] = c.mem.Offset(4 * slot)
			continue
		}
		r := GP32()
		MOVL(c.in.Offset(4*i), r)
		c.x[i] = r
	}
	c.c, c.t = GP32(), GP32()
}

// half returns the instructions of a column (or, diag, a row) round, one
// quarter round after another.
func (c *scalarSalsa) half(diag bool) []func() {
	qs := salsaColumns
	if diag {
		qs = salsaRows
	}
	var out []func()
	for _, qr := range qs {
		cm := c.x[qr[2]].(Mem)
		w := c.x
		w[qr[2]] = c.c
		out = append(out, func() { MOVL(cm, c.c) })
		for s, st := range salsaSteps(qr) {
			dst, y, z := w[st[0]].(GPVirtual), w[st[1]].(GPVirtual), w[st[2]].(GPVirtual)
			n := salsaRotations[s]
			out = append(out,
				func() { LEAQ(Mem{Base: y.As64(), Index: z.As64(), Scale: 1}, c.t.As64()) },
				func() { ROLL(U8(n), c.t) },
				func() { XORL(c.t, dst) })
		}
		out = append(out, func() { MOVL(c.c, cm) })
	}
	return out
}

// finish adds the input words, stores words 8-15 (the message's first 32
// bytes of key stream) at ks and returns the Poly1305 key from words 0-7
// as r0, r1 (not yet clamped) and s0, s1.
func (c *scalarSalsa) finish(ks Mem) (r0, r1, s0, s1 GPVirtual) {
	word := func(i int) GPVirtual {
		if r, ok := c.x[i].(GPVirtual); ok {
			return r
		}
		r := GP32()
		MOVL(c.x[i], r)
		return r
	}
	for i := 8; i < 16; i++ {
		w := word(i)
		ADDL(c.in.Offset(4*i), w)
		MOVL(w, ks.Offset(4*(i-8)))
	}
	return polyKey(c.in, word)
}
