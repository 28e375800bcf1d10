package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
)

// skewedRounds emits the rounds of a vertical group with block 0 in
// general registers ahead of it, so that the scalar pipes, which the
// vector rounds leave free, do the work that waits for block 0 (the
// Poly1305 key) while the group's last rounds run. count is a frame word
// holding rounds/2, which must be 4, 6, 8 or 10 (rounds 8, 12, 16 or 20):
//
//   - the first count/2 double rounds of the group each have two of block
//     0's beside them (the scalar rounds run at their own latency, about
//     half the group's), so block 0 is done halfway;
//   - done is then called to finish block 0 and return the work that
//     needs it, in chunks of a few hundred instructions;
//   - the other count/2 double rounds of the group follow, one after each
//     chunk, in program order so close that the scheduler's window holds
//     a chunk and a double round at once. Chunks past the last double
//     round run after it.
//
// count is left holding rounds/4.
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
	// With c = rounds/2 double rounds, n2 = min(3, c/2) of the group's
	// have two of block 0's beside them, n1 = c - 2·n2 one, and n2 are
	// left for the chunks.
	Comment("Block 0's double rounds beside the group's: n1 one to one, then n2 two to one.")
	n1 := AllocLocal(8)
	{
		c, n2, most := GP64(), GP64(), GP64()
		MOVQ(count, c)
		MOVQ(c, n2)
		SHRQ(U8(1), n2)
		MOVQ(U32(maxSkewedHalf), most)
		CMPQ(n2, most)
		CMOVQGT(most, n2)
		MOVQ(n2, count)
		SUBQ(n2, c)
		SUBQ(n2, c)
		MOVQ(c, n1)
		TESTQ(c, c)
		JZ(LabelRef(name + "_skewed"))
	}
	Label(name + "_rounds")
	interleave(vecDouble(), scalarDouble(sc, 1))
	DECQ(n1)
	JNZ(LabelRef(name + "_rounds"))
	Label(name + "_skewed")
	Label(name + "_rounds2")
	interleave(vecDouble(), scalarDouble(sc, 2))
	DECQ(count)
	JNZ(LabelRef(name + "_rounds2"))
	{
		// count again n2, for the second half
		c, n2, most := GP64(), GP64(), GP64()
		MOVQ(U32(maxSkewedHalf), most)
		Load(Param("rounds"), c)
		SHRQ(U8(2), c)
		MOVQ(c, n2)
		CMPQ(n2, most)
		CMOVQGT(most, n2)
		MOVQ(n2, count)
	}
	chunks := done()

	Comment("The second half, each double round after a chunk of the work block 0 was waited for.")
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

func emit(code []func()) {
	for _, f := range code {
		f()
	}
}

// The double rounds left for the chunks: at least 2 (ChaCha8), at most
// 3.
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
