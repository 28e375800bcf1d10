package main

import (
	"github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/ifma"
)

// Poly1305 in vector lanes (AVX-512 IFMA, radix 2^44, ifma's arithmetic)
// over a MAC input of k blocks kept in the frame: two vectors of eight
// lanes, one block per lane, take a group of 16 blocks at a time. The
// groups of 16 from the start are full but for the last, of kLast = k -
// 16·full blocks (1 to 16). With h = Σ m_i·r^(k-i) (blocks m_0..m_{k-1},
// i counted from 0):
//
//   - the full groups go through Horner's rule 16 blocks at a time,
//     acc = acc·r^16 + group, so lane s ends up holding the sum S_s of
//     their blocks s, 16 + s, ... with the powers of r^16 between them;
//   - their part of h is r^kLast · Σ_s S_s·r^(16-s): the lanes are
//     multiplied by r^16..r^1 and summed, and the sum multiplied by
//     r^kLast in general registers;
//   - the last group's lane s is multiplied by r^(kLast-s), which is zero
//     in the power table from s = kLast on, so that whatever the frame
//     holds past the input adds nothing.
//
// The loads of a pair of 64-byte pieces interleave their blocks: lane q of
// the pair's vector holds block laneBlock[q] of the pair, and the powers
// are permuted to match.
var laneBlock = [8]int{0, 4, 1, 5, 2, 6, 3, 7}

var laneOrderTable *Mem

// laneOrder is the VPERMQ index that puts the eight natural-order entries
// of a power table into lane order.
func laneOrder() Mem {
	if laneOrderTable == nil {
		m := GLOBL("laneorder", attr.RODATA|attr.NOPTR)
		for q, b := range laneBlock {
			DATA(8*q, U64(uint64(b)))
		}
		laneOrderTable = &m
	}
	return *laneOrderTable
}

// lanes is the vector code's constants.
type lanes struct {
	k     ifma.Consts
	hibit VecVirtual // 2^128 at limb 2
	order VecVirtual
	t     powerTable
}

func newLanes(t powerTable) *lanes {
	l := &lanes{k: ifma.NewConsts(), hibit: ifma.Const(1 << 40), order: ZMM(), t: t}
	VMOVDQU64(laneOrder(), l.order)
	return l
}

// group loads the 16 blocks at m (256 bytes) as two vectors of limbs, each
// block with the 2^128 bit.
func (l *lanes) group(m Mem) [2][3]VecVirtual {
	return [2][3]VecVirtual{l.pair(m, 0), l.pair(m, 1)}
}

// pair loads blocks 8p..8p+7 of the group at m as a vector of limbs (lane
// q holding block 8p + laneBlock[q]).
func (l *lanes) pair(m Mem, p int) [3]VecVirtual {
	var g [3]VecVirtual
	x, y := ZMM(), ZMM()
	VMOVDQU64(m.Offset(128*p), x)
	VMOVDQU64(m.Offset(128*p+64), y)
	lo, hi := ZMM(), ZMM()
	VPUNPCKLQDQ(y, x, lo)
	VPUNPCKHQDQ(y, x, hi)
	for i := range 3 {
		g[i] = ZMM()
	}
	// m0 = lo & mask; m1 = (lo>>44 | hi<<20) & mask; m2 = hi>>24 | 2^40
	VPANDQ(l.k.Mask44, lo, g[0])
	VPSHRDQ(U8(44), hi, lo, g[1])
	VPANDQ(l.k.Mask44, g[1], g[1])
	VPSRLQ(U8(24), hi, g[2])
	VPORQ(l.hibit, g[2], g[2])
	return g
}

// powers returns the multipliers for pair p of a group from table entry
// first on (base: the table's address), in lane order.
func (l *lanes) powers(base Mem, first, p int) [5]Op {
	var m [5]Op
	for c := range m {
		v := ZMM()
		VPERMQ(l.t.at(base, c, first+8*p), l.order, v)
		m[c] = v
	}
	return m
}

// products adds the columns of g's lanes times the powers from entry first
// on to cols (nil: start them).
func (l *lanes) products(g [2][3]VecVirtual, base Mem, first int, cols *[3]VecVirtual) {
	for p := range g {
		l.pairProducts(g[p], p, base, first, cols)
	}
}

// pairProducts is products for pair p alone.
func (l *lanes) pairProducts(g [3]VecVirtual, p int, base Mem, first int, cols *[3]VecVirtual) {
	lo := [3]VecVirtual{ZMM(), ZMM(), ZMM()}
	hi := [3]VecVirtual{ZMM(), ZMM(), ZMM()}
	ifma.Products(g, lo, hi, l.powers(base, first, p), l.k, false)
	if cols[0] == nil {
		*cols = lo
		return
	}
	for i := range 3 {
		VPADDQ(lo[i], cols[i], cols[i])
	}
}

// macLanes computes h = Σ m_i·r^(k-i) + pre·r^k over the k blocks at
// ctOff in f (an area of 256·(full+1) bytes, whose blocks past k may hold
// anything), for full = (k-1)/16 full groups between 1 and maxFull and
// kLast = k - 16·full, both in general registers; pre is the limbs of
// what came before (the additional data's accumulator) at a frame area.
// It returns h in radix 2^64 (h2 <= 4). The power table must be filled.
func (l *lanes) macLanes(name string, f *frame64, ctOff int, pre Mem, full, kLast GPVirtual, maxFull int) (h0, h1, h2 GPVirtual) {
	t := l.t
	b := f.base()
	in := b.Offset(ctOff)
	acc := l.group(in)
	for i := range 3 {
		x := XMM()
		VMOVQ(pre.Offset(8*i), x)
		VPADDQ(x.AsZ(), acc[0][i], acc[0][i])
	}
	var r16 [5]Op
	for c := range r16 {
		v := ZMM()
		VPBROADCASTQ(t.at(b, c, 0), v)
		r16[c] = v
	}
	for g := 1; g <= maxFull-1; g++ {
		skip := fmtName("%s_group%d", name, g)
		CMPQ(full, U8(g))
		JBE(LabelRef(skip))
		next := l.group(in.Offset(256 * g))
		for p := range acc {
			hi := [3]VecVirtual{ZMM(), ZMM(), ZMM()}
			ifma.Mul(acc[p], next[p], hi, r16, l.k, true)
		}
		Label(skip)
	}
	var cols [3]VecVirtual
	l.products(acc, b, 0, &cols)
	fullSum := ifma.HSum(cols, [3]VecVirtual{ZMM(), ZMM(), ZMM()})

	// The last group at in + 256·full, its powers from entry 16 - kLast.
	gp, tp, n := GP64(), GP64(), GP64()
	LEAQ(in, gp)
	MOVQ(full, tp)
	SHLQ(U8(8), tp)
	ADDQ(tp, gp)
	// (its second pair only if it has more than 8 blocks: their powers
	// are all zero otherwise)
	LEAQ(b, tp)
	MOVQ(U32(16), n)
	SUBQ(kLast, n)
	LEAQ(Mem{Base: tp, Index: n, Scale: 8}, tp)
	alone, join := fmtName("%s_lenalone", name), fmtName("%s_lastdone", name)
	CMPQ(kLast, U8(1))
	JE(LabelRef(alone))
	var lastCols [3]VecVirtual
	l.pairProducts(l.pair(Mem{Base: gp}, 0), 0, Mem{Base: tp}, 0, &lastCols)
	short := fmtName("%s_lastpair", name)
	CMPQ(kLast, U8(8))
	JBE(LabelRef(short))
	l.pairProducts(l.pair(Mem{Base: gp}, 1), 1, Mem{Base: tp}, 0, &lastCols)
	Label(short)
	lastSum := ifma.HSum(lastCols, [3]VecVirtual{ZMM(), ZMM(), ZMM()})
	JMP(LabelRef(join))

	// A last group of one block (the ciphertext filled whole groups, so
	// it is the length block) needs no lanes: h = (full groups' sum +
	// block)·r, which the multiplication below makes of it.
	Label(alone)
	{
		m0, m1, top := GP64(), GP64(), GP64()
		MOVQ(Mem{Base: gp}, m0)
		MOVQ(Mem{Base: gp, Disp: 8}, m1)
		MOVQ(U32(1), top)
		m := [3]GPVirtual{}
		m[0], m[1], m[2] = ifma.SplitH44(m0, m1, top)
		for i := range 3 {
			ADDQ(m[i], fullSum[i])
			XORQ(lastSum[i], lastSum[i])
		}
	}
	Label(join)

	// The full groups' sum times r^kLast, entry 16 - kLast (still at tp),
	// plus the last group's.
	ifma.Carry44(fullSum[0], fullSum[1], fullSum[2])
	var xo [3]Op
	for i := range 3 {
		xo[i] = fullSum[i]
	}
	y := ifma.MulScalar(xo, t.mults(Mem{Base: tp}, 0))
	for i := range 3 {
		ADDQ(lastSum[i], y[i])
	}
	return ifma.PackH44(y[0], y[1], y[2])
}

// additionalData absorbs the kernel's additional data in general
// registers and stores the accumulator, split into 44-bit limbs, at pre:
// the starting value of lane 0 of the first group of Poly1305 lanes.
func additionalData(k key, name string, pre Mem) {
	Comment("The additional data.")
	a := newAcc()
	adp, adn := GP64(), GP64()
	Load(Param("ad").Base(), adp)
	Load(Param("ad").Len(), adn)
	a.padded(k, adp, adn, name+"_ad")
	l0, l1, l2 := ifma.SplitH44(a.h0, a.h1, a.h2)
	MOVQ(l0, pre)
	MOVQ(l1, pre.Offset(8))
	MOVQ(l2, pre.Offset(16))
}
