package ifma

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// Times20 returns the five multiplier vectors of the number with limbs b:
// b0, b1, b2 and 20·b1, 20·b2, each multiple one multiply-add by 20 into a
// zeroed register. That is one instruction where 16·b + 4·b took three
// (the kernel is bound by its vector instructions), and its latency (4
// cycles against 2) costs nothing in the chain of powers: a column needs
// the multiple only for its second multiply-add, 4 cycles after the first.
// Measured 1-6% faster per kernel call (256 B to 4 KiB, paired).
func Times20(b [3]VecVirtual, k Consts) [5]VecVirtual {
	s1, s2 := ZMM(), ZMM()
	VPSUBQ(s1, s1, s1)
	VPSUBQ(s2, s2, s2)
	VPMADD52LUQ(k.K20, b[1], s1)
	VPMADD52LUQ(k.K20, b[2], s2)
	return [5]VecVirtual{b[0], b[1], b[2], s1, s2}
}

// Consts are the broadcast constants of the arithmetic: the limb masks and
// the multipliers applied with VPMADD52LUQ.
type Consts struct {
	Mask44, Mask42       VecVirtual
	K256, K5120, K5, K20 VecVirtual // multipliers applied with VPMADD52LUQ
}

func NewConsts() Consts {
	return Consts{
		Mask44: Const(1<<44 - 1), Mask42: Const(1<<42 - 1),
		K256: Const(1 << 8), K5120: Const(5 << 10), K5: Const(5),
		K20: Const(20),
	}
}

// constValues are the quadwords of the table Const broadcasts
// from: a broadcast from memory is a load alone, where one from a general
// register also takes the shuffle port the vector code needs.
var constValues = []uint64{1<<44 - 1, 1<<42 - 1, 1 << 8, 5 << 10, 5, 20, 1 << 40}

var constTable *Mem

// Const returns v (one of constValues) in every lane of a ZMM.
func Const(v uint64) VecVirtual {
	if constTable == nil {
		m := GLOBL("polyIFMAConsts", attr.RODATA|attr.NOPTR)
		for i, c := range constValues {
			DATA(8*i, U64(c))
		}
		constTable = &m
	}
	for i, c := range constValues {
		if c == v {
			z := ZMM()
			VPBROADCASTQ(constTable.Offset(8*i), z)
			return z
		}
	}
	panic(fmt.Sprintf("Const: %#x is not in constValues", v))
}

// Mul sets h = h·b (partially reduced; limbs below 2^44.01, 2^44.01,
// 2^42.01 after) using lo and hi as product columns, or, with add, h =
// h·b + lo, lo holding message limbs (below 2^44): they are the initial
// value of the columns, which saves adding them to h beforehand. b holds
// b0, b1, b2, 20·b1, 20·b2.
//
// Bounds (a = h on entry below 2^45, 2^45, 2^43.4; b limbs below 2^44.01,
// 2^44.01, 2^42.01, so 20·b below 2^48.4): a column of high halves is
// below 2^40.7 (column 2 below 2^37.7), so 256·hi0, 256·hi1 and 5120·hi2
// stay below 2^52 and VPMADD52LUQ with a broadcast constant shifts and adds
// them exactly; each column d stays below 2^55.
func Mul(h, lo, hi [3]VecVirtual, b [5]Op, k Consts, add bool) {
	Products(h, lo, hi, b, k, add)
	Carry(h, lo, hi, k)
}

// Carry sets h from the columns d in lo (each below 2^55), using hi.
func Carry(h, lo, hi [3]VecVirtual, k Consts) {
	// One carry step for all three limbs at once (d < 2^55, so every
	// carry is below 2^13):
	//   h0 = d0 & mask44 + 5·(d2 >> 42), h1 = d1 & mask44 + d0 >> 44,
	//   h2 = d2 & mask42 + d1 >> 44
	VPSRLQ(U8(44), lo[0], hi[0])
	VPSRLQ(U8(44), lo[1], hi[1])
	VPSRLQ(U8(42), lo[2], hi[2])
	VPANDQ(k.Mask44, lo[0], h[0])
	VPANDQ(k.Mask44, lo[1], h[1])
	VPANDQ(k.Mask42, lo[2], h[2])
	VPADDQ(hi[0], h[1], h[1])
	VPADDQ(hi[1], h[2], h[2])
	VPMADD52LUQ(k.K5, hi[2], h[0])
}

// Products is Mul without the carry step: it leaves the columns
// d0, d1, d2 (each below 2^55) in lo.
func Products(h, lo, hi [3]VecVirtual, b [5]Op, k Consts, add bool) {
	b0, b1, b2, s1, s2 := b[0], b[1], b[2], b[3], b[4]
	Columns([3][][2]Op{
		{{h[0], b0}, {h[1], s2}, {h[2], s1}},
		{{h[0], b1}, {h[1], b0}, {h[2], s2}},
		{{h[0], b2}, {h[1], b1}, {h[2], b0}},
	}, lo, hi, k, add)
}

// Columns sums the products terms[i] into column i, low halves into
// lo[i] and high halves into hi[i], and adds the high columns into the low
// ones (Fixups). With add, lo already holds values to add to (the next
// message group); otherwise the columns start at zero.
func Columns(terms [3][][2]Op, lo, hi [3]VecVirtual, k Consts, add bool) {
	// VPSUBQ x, x, x is a zero idiom both for the CPU and for avo's
	// liveness analysis (VPXORQ is not, to avo, and would keep the column
	// registers live from the function entry).
	for i := range 3 {
		if !add {
			VPSUBQ(lo[i], lo[i], lo[i])
		}
		VPSUBQ(hi[i], hi[i], hi[i])
	}
	// Interleave the columns so that consecutive multiply-adds go to
	// different destinations (each one waits for its destination).
	for j := range terms[0] {
		for i := range 3 {
			VPMADD52LUQ(terms[i][j][1], terms[i][j][0], lo[i])
			VPMADD52HUQ(terms[i][j][1], terms[i][j][0], hi[i])
		}
	}
	Fixups(lo, hi, k)
}

// Fixups adds the columns of high halves into the columns of low
// halves: d0 = lo0 + 5·2^10·hi2, d1 = lo1 + 2^8·hi0, d2 = lo2 + 2^8·hi1.
func Fixups(lo, hi [3]VecVirtual, k Consts) {
	VPMADD52LUQ(k.K256, hi[0], lo[1])
	VPMADD52LUQ(k.K256, hi[1], lo[2])
	VPMADD52LUQ(k.K5120, hi[2], lo[0])
}

// Square returns a·a for a = r (limbs below 2^44, 2^44, 2^36), with
// the doubled cross products of a square: two products per column instead
// of three, 12 multiply-adds instead of 18 and a column 4 cycles shorter,
// for the first step of the chain of powers:
//
//	d0 = a0·a0 + a1·40a2, d1 = a0·2a1 + a2·20a2, d2 = a0·2a2 + a1·a1
func Square(a [3]VecVirtual, k Consts) [3]VecVirtual {
	a1x2, a2x2, a2x20, a2x40 := ZMM(), ZMM(), ZMM(), ZMM()
	VPADDQ(a[1], a[1], a1x2)
	VPADDQ(a[2], a[2], a2x2)
	VPSUBQ(a2x20, a2x20, a2x20)
	VPMADD52LUQ(k.K20, a[2], a2x20)
	VPADDQ(a2x20, a2x20, a2x40)
	var lo, hi, d [3]VecVirtual
	for i := range 3 {
		lo[i], hi[i], d[i] = ZMM(), ZMM(), ZMM()
	}
	Columns([3][][2]Op{
		{{a[0], a[0]}, {a[1], a2x40}},
		{{a[0], a1x2}, {a[2], a2x20}},
		{{a[0], a2x2}, {a[1], a[1]}},
	}, lo, hi, k, false)
	Carry(d, lo, hi, k)
	return d
}

// Num is a number in every lane of three limb vectors.
type Num = [3]VecVirtual

// NewNum returns three new vector registers.
func NewNum() Num { return Num{ZMM(), ZMM(), ZMM()} }

// Copy returns v in new registers.
func Copy(v Num) Num {
	d := NewNum()
	for i := range 3 {
		VMOVDQA64(v[i], d[i])
	}
	return d
}

// BlendInto sets the lanes of d in mask (bit q for lane q) to src's.
func BlendInto(d, src Num, mask uint16) {
	g, k := GP32(), K()
	MOVL(U32(uint32(mask)), g)
	KMOVW(g, k)
	for i := range 3 {
		VPBLENDMQ(src[i], d[i], k, d[i])
	}
}

// Lane0 returns v's lane 0 in every lane.
func Lane0(v Num) Num {
	d := NewNum()
	for i := range 3 {
		VPBROADCASTQ(v[i].AsX(), d[i])
	}
	return d
}
