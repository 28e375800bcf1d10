package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

// The Salsa20 quarter rounds as word indices (a, b, c, d): the column round,
// then the row round. A quarter round updates b, c, d, a in turn, each with
// the rotated sum of the two words updated just before it.
var (
	columnRound = [4][4]int{{0, 4, 8, 12}, {5, 9, 13, 1}, {10, 14, 2, 6}, {15, 3, 7, 11}}
	rowRound    = [4][4]int{{0, 1, 2, 3}, {5, 6, 7, 4}, {10, 11, 8, 9}, {15, 12, 13, 14}}
)

// rotations of the four steps of a quarter round.
var rotations = [4]int{7, 9, 13, 18}

// quarterSteps returns the four steps of the quarter round (a, b, c, d) as
// (x, y, z): x ^= rotl(y + z, rotations[step]).
func quarterSteps(q [4]int) [4][3]int {
	a, b, c, d := q[0], q[1], q[2], q[3]
	return [4][3]int{{b, a, d}, {c, b, a}, {d, c, b}, {a, d, c}}
}

// preSignature is the signature of the vertical kernels, which start from
// the part of the first double round that does not depend on the counter
// (internal/salsacore's firstRound computes it once per call).
var preSignature = arx.SignatureWith("pre *[17]uint32")

// fromState marks the words a vertical kernel loads from s rather than from
// pre at the start of each batch: 0 and 12, which the first double round
// takes unchanged into the counter's quarter round, and the counter word 8
// (computed per lane).
var fromState = map[int]bool{0: true, 8: true, 12: true}

// input returns the memory operand a batch starts word k from: s[k] for
// the words in fromState, pre[k] for the others.
func input(a arx.Args, pre Mem, k int) Mem {
	if fromState[k] {
		return a.S.Offset(4 * k)
	}
	return pre.Offset(4 * k)
}

// loadWords emits the start of a batch for one set: every word of w but
// the counter word 8, as the first double round starts from it.
// load(v, k) puts word k in every lane of v: w[k]'s register, or t for a
// word kept in memory, which then goes to its slot.
func loadWords(isa arx.ISA, w vstate, t Register, load func(v Register, k int)) {
	for k := range 16 {
		if k == 8 {
			continue
		}
		v, inReg := w[k].(Register)
		if !inReg {
			v = t
		}
		load(v, k)
		if !inReg {
			move(isa, w[k], v)
		}
	}
}

// vstate is the sixteen words of one set of a vertical kernel (register i
// holds word i of every block of the set): registers, or frame slots for
// the words a register-starved kernel keeps in memory.
type vstate [16]Op

// firstDoubleRound emits the part of the first double round that depends on
// the block counter, starting from pre (see internal/salsacore's
// firstRound, which computes the rest once per call): step(x, y, z, r)
// emits x ^= rotl(y + z, r) and xorPre(x, k) emits x ^= pre[k], a rotated
// sum precomputed in a slot whose word the kernel does not load from pre
// (0, 8, 12) or in the extra slot 16.
//
// Of the column round only steps 2-4 of quarter (0, 4, 8, 12) remain (step
// 2's rotated sum is in pre[8]). Of the row round, quarter (5, 6, 7, 4) is
// done except that word 4 comes in as the column round left it, for step
// 3 above, and takes its row update from pre[16] after; (10, 11, 8, 9) has
// steps 2-4 left (step 2's rotated sum in pre[0]), (15, 12, 13, 14) steps
// 1-4 (step 1's rotated sum in pre[12]), and (0, 1, 2, 3) all four. That is
// 37 instructions per state instead of the 96 of a full double round on
// AVX-512.
func firstDoubleRound(step func(x, y, z, r int), xorPre func(x, k int)) {
	xorPre(8, 8)
	step(12, 8, 4, 13)
	xorPre(4, 16) // row quarter (5, 6, 7, 4)'s step 3, done but for this
	step(0, 12, 8, 18)
	// The column round is complete: words 8 and 12 move on into the row
	// round.
	xorPre(8, 0)
	xorPre(12, 12)
	chains := [][][4]int{
		{{1, 0, 3, 7}, {2, 1, 0, 9}, {3, 2, 1, 13}, {0, 3, 2, 18}},
		{{9, 8, 11, 13}, {10, 9, 8, 18}},
		{{13, 12, 15, 9}, {14, 13, 12, 13}, {15, 14, 13, 18}},
	}
	for i := range 4 {
		for _, c := range chains {
			if i < len(c) {
				step(c[i][0], c[i][1], c[i][2], c[i][3])
			}
		}
	}
}

// verticalRounds emits the rounds of a vertical kernel over the interleaved
// sets: the first double round from pre (see firstDoubleRound), then the
// other rounds/2 - 1 in a loop, each step emitted for every set before the
// next. scratch(set, q) are the step temporaries of quarter round q of a set
// (a kernel with registers to spare gives each quarter its own, so four
// independent chains are in flight); xorPre(set, x, k) emits
// sets[set][x] ^= pre[k].
func verticalRounds(isa arx.ISA, a arx.Args, label string, sets []vstate, scratch func(set, q int) (t, u Register), xorPre func(set, x, k int)) {
	Comment("First double round: what depends on the counter (see firstDoubleRound).")
	firstDoubleRound(func(x, y, z, r int) {
		for set, w := range sets {
			t, u := scratch(set, 0)
			stepMem(isa, w[x], w[y], w[z], t, u, r)
		}
	}, func(x, k int) {
		for set := range sets {
			xorPre(set, x, k)
		}
	})
	dr := GP64()
	MOVQ(a.Rounds, dr)
	DECQ(dr)
	Label(label)
	for _, round := range [][4][4]int{columnRound, rowRound} {
		for s := range 4 {
			for q, quarter := range round {
				x := quarterSteps(quarter)[s]
				for set, w := range sets {
					t, u := scratch(set, q)
					stepMem(isa, w[x[0]], w[x[1]], w[x[2]], t, u, rotations[s])
				}
			}
		}
	}
	DECQ(dr)
	JNZ(LabelRef(label))
}

// transpose16 transposes one 16-block state of ZMM registers (w[k] = word k
// of each block) and XORs it into blocks first..first+15 of src and dst,
// each block as soon as it is whole, using free as the first scratch
// register. guarded stores only the blocks that a.Blocks says exist.
func transpose16(a arx.Args, w [16]Register, first int, free Register, guarded bool) {
	isa := arx.AVX512
	var groups [4][4]Register
	for g := range 4 {
		groups[g], free = isa.Transpose4x4([4]Register{w[4*g], w[4*g+1], w[4*g+2], w[4*g+3]}, free)
	}
	// groups[g][j] lane L = words 4g..4g+3 of block 4L+j.
	for j := range 4 {
		var blocks [4]Register
		blocks, free = arx.Transpose128x4([4]Register{groups[0][j], groups[1][j], groups[2][j], groups[3][j]}, free)
		for l := range 4 {
			a.XorBlock(isa, first+4*l+j, 0, blocks[l], guarded)
		}
	}
}

// move copies a vector between registers, or to or from a frame slot
// (aligned, so SSSE3 uses MOVO, which Core 2 runs faster than MOVOU).
func move(isa arx.ISA, dst, src Op) {
	_, toMem := dst.(Mem)
	_, fromMem := src.(Mem)
	switch {
	case !isa.VEX:
		MOVO(src, dst)
	case toMem:
		isa.Store(dst.(Mem), src.(Register))
	case fromMem:
		isa.Load(dst.(Register), src.(Mem))
	default:
		isa.Copy(dst.(Register), src.(Register))
	}
}
