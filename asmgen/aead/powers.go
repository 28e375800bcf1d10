package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/ifma"
)

// powerTable is a frame table of r^1..r^16 in radix 2^44 for the vector
// Poly1305 lanes: five arrays, one per multiplier of ifma.Times20 (limb 0,
// limb 1, limb 2, 20·limb 1, 20·limb 2), of 32 quadwords each. Entry i
// holds r^(16-i) for i < 16 (r^16 first) and 0 from 16 on, so that eight
// consecutive entries from 16 - j on are the powers a group of j blocks
// needs, zero past its end.
type powerTable struct{ off int } // within a frame64

const powerEntries = 32

func newPowerTable(l *layout64) powerTable { return powerTable{l.take(5 * 8 * powerEntries)} }

// at returns entry i of array c: base is the frame64's base, or that
// moved on by a multiple of 8 bytes, for an entry chosen at run time.
func (t powerTable) at(base Mem, c, i int) Mem { return base.Offset(t.off + 8*powerEntries*c + 8*i) }

// mults returns entry i's five multipliers as memory operands.
func (t powerTable) mults(base Mem, i int) [5]Op {
	var m [5]Op
	for c := range m {
		m[c] = t.at(base, c, i)
	}
	return m
}

// zeroTail clears entries 16-31 of every array.
func (t powerTable) zeroTail(base Mem) {
	z := ZMM()
	VPXORD(z, z, z)
	for c := range 5 {
		for i := 16; i < powerEntries; i += 8 {
			VMOVDQU64(z, t.at(base, c, i))
		}
	}
}

// fill computes r^1..r^16 from the clamped r at the key in vector lanes
// and stores them in the table's entries 0-15: r^2, then r^3 and r^4, then
// r^5..r^8, then r^9..r^16, each multiplication doubling the powers at
// hand. The numbers stay in registers (some twenty of them): a kernel calls
// it once its rounds are done.
func (t powerTable) fill(f *frame64, k key, c ifma.Consts) {
	type num = ifma.Num
	newNum := ifma.NewNum
	mul := func(a, b num) num {
		d := ifma.Copy(a)
		var ops [5]Op
		for i, v := range ifma.Times20(b, c) {
			ops[i] = v
		}
		ifma.Mul(d, newNum(), newNum(), ops, c, false)
		return d
	}
	blend := func(base, src num, mask uint16) num {
		d := ifma.Copy(base)
		ifma.BlendInto(d, src, mask)
		return d
	}
	lane0 := ifma.Lane0
	l0, l1, l2 := ifma.LoadR44(k.r0())
	r := newNum()
	VPBROADCASTQ(l0, r[0])
	VPBROADCASTQ(l1, r[1])
	VPBROADCASTQ(l2, r[2])
	r2 := mul(r, r)
	q := blend(r, r2, 0x55)
	x := mul(q, r2)
	p4 := blend(q, x, 0x33)
	y := mul(p4, lane0(x))
	low := blend(p4, y, 0x0f)
	high := mul(low, lane0(y))
	b := f.base()
	for i, v := range []num{high, low} {
		for a, m := range ifma.Times20(v, c) {
			VMOVDQU64(m, t.at(b, a, 8*i))
		}
	}
}

// scalarPowers returns the code that computes r..r^4, r^8 and r^12..r^16
// from the clamped r at the key in general registers (MULX,
// ifma.MulScalar) and stores them at their entries, in five chunks for a
// kernel to place beside its vector rounds (skewedRounds), at most one
// link of the chain r^2, r^4, r^8, r^12 (or r^16), r^13 (..r^15) to a
// chunk. Each product is read back from the table, so nothing stays in
// registers between the chunks. fillRest then computes the others,
// r^5..r^11, in one vector multiplication.
func (t powerTable) scalarPowers(f *frame64, k key) [][]func() {
	store := func(n int, l [3]GPVirtual) {
		b := f.base()
		for c := range 3 {
			MOVQ(l[c], t.at(b, c, 16-n))
		}
		for c := 1; c < 3; c++ {
			x := GP64()
			LEAQ(Mem{Base: l[c], Index: l[c], Scale: 4}, x) // 5·l
			SHLQ(U8(2), x)
			MOVQ(x, t.at(b, 2+c, 16-n))
		}
	}
	mul := func(a, b int) func() {
		return func() {
			base := f.base()
			y := t.mults(base, 16-b)
			var x [3]Op
			for c := range x {
				x[c] = t.at(base, c, 16-a)
			}
			store(a+b, ifma.MulScalar(x, y))
		}
	}
	r1 := func() {
		l0, l1, l2 := ifma.LoadR44(k.r0())
		store(1, [3]GPVirtual{l0, l1, l2})
	}
	return [][]func(){
		{r1, mul(1, 1)},
		{mul(2, 2), mul(2, 1)},
		{mul(4, 4)},
		{mul(8, 4), mul(8, 8)},
		{mul(12, 1), mul(12, 2), mul(12, 3)},
	}
}

// fillRest computes the powers scalarPowers leaves out in vector lanes,
// from r..r^4, r^4 and r^8 in the table: x = (r^4, r^3, r^2, r, r^4, r^3,
// r^2, r) times (r^4 four times, r^8 four times) is r^8..r^5 and
// r^12..r^9 (r^8 and r^12 again).
func (t powerTable) fillRest(f *frame64, c ifma.Consts) {
	b := f.base()
	p48 := ifma.NewNum() // x, then the product
	for i, v := range p48 {
		VMOVDQU64(t.at(b, i, 8), v)
		VSHUFI64X2(U8(0xee), v, v, v) // entries 12-15 twice
	}
	upper, g := K(), GP32()
	MOVL(U32(0xf0), g)
	KMOVW(g, upper)
	var y48 [5]Op
	for a := range 5 {
		v := ZMM()
		VPBROADCASTQ(t.at(b, a, 12), v)
		VPBROADCASTQ(t.at(b, a, 8), upper, v)
		y48[a] = v
	}
	ifma.Mul(p48, ifma.NewNum(), ifma.NewNum(), y48, c, false)
	for a, m := range ifma.Times20(p48, c) {
		VEXTRACTI64X4(U8(1), m, t.at(b, a, 4))
		VMOVDQU64(m.AsY(), t.at(b, a, 8))
	}
}
