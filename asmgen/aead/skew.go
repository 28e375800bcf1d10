package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
)

// skewedRounds emits the rounds of a vertical group with block 0 in
// general registers (sc, loaded here) ahead of it, so that the scalar
// pipes, which the vector rounds leave free, do the work that waits for
// block 0 (the Poly1305 key) while the group's last rounds run. count is
// a frame word holding rounds/2 = c, even and at least 2 (rounds 4, 8, 12,
// 20, ...):
//
//   - n1 = c - 2·n2 double rounds of the group have one of block 0's beside
//     them, then n2 = min(5, c/2) two each (block 0 alone runs at about
//     half the group's time a double round, so two fit beside one), which
//     finishes block 0 with n2 of the group's left (all of ChaCha20's
//     first five);
//   - done is then called to finish block 0 and return the work that
//     needs it, in chunks (of a few multiplications each);
//   - the group's last n2 double rounds follow, chunk i interleaved with
//     double round i. The chunks' code must not depend on how many there
//     are: those from 1 on are emitted twice, with their double round and
//     without it (for round counts that have fewer), so they may hold no
//     labels. Chunks past the fifth run after the rounds.
//
// count is left holding n2.
func skewedRounds(name string, count Mem, g group, sc *scalarChaCha, done func() [][]func()) {
	vecDouble := func() []func() {
		var out []func()
		for _, diag := range []bool{false, true} {
			round, realign := g.half(diag)
			out = append(out, round...)
			out = append(out, realign...)
		}
		return out
	}
	// With c = rounds/2 double rounds, n2 = min(maxSkewedHalf, c/2) of
	// the group's have two of block 0's beside them, n1 = c - 2·n2 one,
	// and n2 are left for the chunks. Counted before the scalar block
	// takes every general register.
	n1, n2 := AllocLocal(8), AllocLocal(8)
	{
		c, h, most := GP64(), GP64(), GP64()
		MOVQ(count, c)
		MOVQ(c, h)
		SHRQ(U8(1), h)
		MOVQ(U32(maxSkewedHalf), most)
		CMPQ(h, most)
		CMOVQGT(most, h)
		MOVQ(h, count)
		MOVQ(h, n2)
		SUBQ(h, c)
		SUBQ(h, c)
		MOVQ(c, n1)
	}
	sc.load()
	Comment("Block 0's double rounds beside the group's: n1 one to one, then n2 two to one.")
	CMPQ(n1, U8(0))
	JE(LabelRef(name + "_skewed"))
	Label(name + "_rounds")
	interleave(vecDouble(), scalarDouble(sc, 1))
	DECQ(n1)
	JNZ(LabelRef(name + "_rounds"))
	Label(name + "_skewed")
	interleave(vecDouble(), scalarDouble(sc, 2))
	DECQ(n2)
	JNZ(LabelRef(name + "_skewed"))
	chunks := done()

	Comment("The group's last n2 double rounds, each beside a chunk of the work that waited for block 0.")
	for i := 0; i < maxSkewedHalf || i < len(chunks); i++ {
		var chunk []func()
		if i < len(chunks) {
			chunk = chunks[i]
		}
		switch {
		case i >= maxSkewedHalf:
			emit(chunk)
		case i < minSkewedHalf:
			interleave(vecDouble(), chunk)
		default:
			// a double round only some round counts have: the chunk
			// without it otherwise (a chunk's code is emitted twice, so
			// it may hold no labels)
			alone, end := fmtName("%s_alone%d", name, i), fmtName("%s_half%d", name, i)
			CMPQ(count, U8(i))
			JBE(LabelRef(alone))
			interleave(vecDouble(), chunk)
			JMP(LabelRef(end))
			Label(alone)
			emit(chunk)
			Label(end)
		}
	}
}

// emit emits code in order.
func emit(code []func()) {
	for _, f := range code {
		f()
	}
}

// The group's double rounds left for the chunks: at least 1 (rounds 4),
// at most 5 (ChaCha20's half).
const (
	minSkewedHalf = 1
	maxSkewedHalf = 5
)

// scalarDouble is n of block 0's double rounds.
func scalarDouble(sc *scalarChaCha, n int) []func() {
	var out []func()
	for range n {
		out = append(out, sc.half(columns)...)
		out = append(out, sc.half(diagonals)...)
	}
	return out
}
