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
	type num = [3]VecVirtual
	newNum := func() num { return num{ZMM(), ZMM(), ZMM()} }
	mul := func(a, b num) num {
		d := newNum()
		for i := range 3 {
			VMOVDQA64(a[i], d[i])
		}
		var ops [5]Op
		for i, v := range ifma.Times20(b, c) {
			ops[i] = v
		}
		ifma.Mul(d, newNum(), newNum(), ops, c, false)
		return d
	}
	blend := func(base, src num, mask uint16) num {
		d := newNum()
		g, km := GP32(), K()
		MOVL(U32(uint32(mask)), g)
		KMOVW(g, km)
		for i := range 3 {
			VMOVDQA64(base[i], d[i])
			VPBLENDMQ(src[i], d[i], km, d[i])
		}
		return d
	}
	lane0 := func(v num) num {
		d := newNum()
		for i := range 3 {
			VPBROADCASTQ(v[i].AsX(), d[i])
		}
		return d
	}
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
