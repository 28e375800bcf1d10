package main

import (
	"fmt"
	"sort"

	"github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/ifma"
)

// ifmaAccs is the number of accumulators of 8 lanes (one block per lane)
// polyIFMA keeps: two, so that two independent multiplication chains keep
// the multiply-add port busy, and a group is 16 blocks.
const ifmaAccs = 2

// ifma generates polyIFMA: two accumulators of 8 lanes each, one block per
// lane, in radix 2^44 (limbs at bits 0, 44 and 88). It first computes the
// powers of r it multiplies by (ifmaPowers) and parks the per-lane ones in
// its own frame, which Go neither zeroes nor sees. The first group of 16
// blocks becomes the accumulators (h added to the lane of the first real
// block); every further group is the initial value of the product columns
// of the accumulators times r^16 (acc = acc·r^16 + m); at the end each lane
// is multiplied by the power of r that brings its block to its place in the
// message, and the lanes are summed. The tail blocks then go through the
// scalar radix 2^64 code, one at a time: for the one or two blocks of an
// AEAD's lengths and padding that is cheaper than another vector group.
//
// VPMADD52LUQ/HUQ multiply the low 52 bits of each operand and add the low
// or high 52 bits of the 104-bit product. Operands stay below 2^52: the
// accumulator limbs below 2^45, 2^45, 2^43.4 (the first group: h plus a
// block), later below 2^44.01, 2^44.01, 2^42.01; the powers' limbs below
// 2^44.01 and their multiples of 20 below 2^48.4 (ifma.Mul has the
// detailed bounds). In radix 2^44 with p = 2^130 - 5, a product at limb
// position 132 is worth 20 at position 0, so
//
//	d0 = a0·b0 + a1·20b2 + a2·20b1
//	d1 = a0·b1 + a1·b0  + a2·20b2
//	d2 = a0·b2 + a1·b1  + a2·b0
//
// The high halves sit 52 bits up: the high half of column 0 lands at bit
// 52 = 44 + 8 (column 1 shifted left 8), column 1's at column 2 shifted
// left 8, and column 2's at bit 140, worth 5·2^10 at bit 0; ifma.Mul adds
// them with multiply-adds by those constants.
func ifmaKernel() {
	const accs = ifmaAccs
	name := "polyIFMA"
	// Not NOSPLIT: its frame (the parked powers and the stage) is larger
	// than a nosplit function may take.
	TEXT(name, 0, "func(h *[3]uint64, r *[2]uint64, msg []byte, tail []byte)")
	Doc(name+fmt.Sprintf(" absorbs len(msg)/16 blocks, %d per iteration (len(msg) a", 8*accs),
		"multiple of 16, at least 256), and then the len(tail)/16 blocks of tail",
		"(a multiple of 16, possibly 0) one at a time. r is the clamped key half r.")
	Pragma("noescape")

	hp := Mem{Base: Load(Param("h"), GP64())}
	rp := Mem{Base: Load(Param("r"), GP64())}
	k := ifma.NewConsts()
	main, final := ifmaPowers(rp, k)
	// The per-lane powers wait in the frame until the last group; the
	// registers are needed for the loop.
	parked := AllocLocal(64 * 3 * accs)
	for a := range accs {
		for i := range 3 {
			VMOVDQU64(final[a][i], parked.Offset(64*(3*a+i)))
		}
	}

	ptr := Load(Param("msg").Base(), GP64())
	n := Load(Param("msg").Len(), GP64())
	// The message need not fill whole groups: the first group is padded in
	// front with z empty lanes (no block, no 2^128 bit), which add nothing,
	// and h enters at the lane of the first real block. The lengths decide
	// z, so masks and branches on it leak nothing secret.
	z := GP64()
	SHRQ(U8(4), n) // blocks
	MOVQ(n, z)
	NEGQ(z)
	ANDQ(U8(8*accs-1), z) // empty lanes in front
	ADDQ(z, n)
	SHRQ(U8(3+log2(accs)), n) // iterations
	// The first group starts 16·z bytes before the message, in lanes its
	// loads mask off. A masked load across a page boundary whose part on
	// one page is all masked off takes a microcode assist (some 400 cycles
	// here), so when a page boundary lies in those 16·z bytes (the message
	// starts less than 16·z bytes into a page; an address, not a secret)
	// the first group goes through a 64-byte-aligned stage in the frame
	// instead, its 16 - z blocks copied to 16·z bytes in; aligned loads
	// never cross a page. The copy reads msg[0:256] (len(msg) >= 256),
	// which the stage has room for. Otherwise the loads read the message
	// directly: the copy's stores and loads do not line up, which costs
	// store forwarding (1488 B 4-7% slower).
	stage := AllocLocal(64 + 2*128*accs)
	first := GP64()
	{
		t, c := GP64(), GP64()
		MOVQ(z, t)
		SHLQ(U8(4), t)
		MOVQ(ptr, c)
		ANDQ(U32(4095), c)
		SUBQ(t, ptr) // the first group starts 16·z bytes early
		MOVQ(ptr, first)
		CMPQ(c, t)
		SBBQ(c, c) // all ones if the group starts on the page before
		TESTQ(c, c)
		JZ(LabelRef("ifma_direct"))
		LEAQ(stage, first)
		ADDQ(U8(63), first)
		ANDQ(I8(-64), first)
		d, src := GP64(), GP64()
		LEAQ(Mem{Base: first, Index: t, Scale: 1}, d)
		LEAQ(Mem{Base: ptr, Index: t, Scale: 1}, src) // the message
		for j := range 2 * accs {
			v := ZMM()
			VMOVDQU64(Mem{Base: src, Disp: 64 * j}, v)
			VMOVDQU64(v, Mem{Base: d, Disp: 64 * j})
		}
		Label("ifma_direct")
	}

	mask44 := k.Mask44

	var r [5]Op
	for i, v := range ifma.Times20(main, k) {
		r[i] = v
	}
	hibit := ifma.Const(1 << 40) // 2^128 at limb 2 (bit 88)

	// Masks of the first group, from the table ifmaMasks makes (an address
	// that depends on z, a length).
	type firstMasks struct{ x, y, lanes Op }
	fm := make([]firstMasks, accs)
	H := make([][3]VecVirtual, accs)
	l := [3]GPVirtual{}
	l[0], l[1], l[2] = ifma.LoadH44(hp)
	{
		tbl := GP64()
		LEAQ(ifmaMasks(), tbl)
		SHLQ(U8(4), z)
		ADDQ(z, tbl)
		for a := range fm {
			fm[a].x, fm[a].y, fm[a].lanes = K(), K(), K()
			row := Mem{Base: tbl, Disp: 8 * a}
			KMOVW(row, fm[a].x)
			KMOVW(row.Offset(2), fm[a].y)
			KMOVW(row.Offset(4), fm[a].lanes)
			kh := K()
			KMOVW(row.Offset(6), kh)
			for i := range 3 {
				H[a][i] = ZMM()
				VPBROADCASTQ_Z(l[i], kh, H[a][i])
			}
		}
	}

	// Per-accumulator scratch: product columns (lo, hi); the hi columns
	// double as message temporaries, the lo columns receive the message
	// limbs.
	L := make([][3]VecVirtual, accs)
	G := make([][3]VecVirtual, accs)
	for a := range L {
		for i := range 3 {
			L[a][i], G[a][i] = ZMM(), ZMM()
		}
	}

	// load converts one group of blocks into the limbs L; the first group
	// loads through the masks.
	load := func(isFirst bool) {
		for a := range accs {
			x, y := G[a][0], G[a][1]
			ulo, uhi := G[a][2], G[a][0]
			if isFirst {
				VMOVDQU64_Z(Mem{Base: first, Disp: 128 * a}, fm[a].x, x)
				VMOVDQU64_Z(Mem{Base: first, Disp: 128*a + 64}, fm[a].y, y)
			} else {
				VMOVDQU64(Mem{Base: ptr, Disp: 128 * a}, x)
				VMOVDQU64(Mem{Base: ptr, Disp: 128*a + 64}, y)
			}
			VPUNPCKLQDQ(y, x, ulo)
			VPUNPCKHQDQ(y, x, uhi)
			// m0 = lo & mask; m1 = (lo>>44 | hi<<20) & mask, the funnel
			// shift one instruction (AVX512_VBMI2) where two shifts and a
			// ternary logic took three; m2 = hi>>24 | 2^40
			VPANDQ(mask44, ulo, L[a][0])
			VPSHRDQ(U8(44), uhi, ulo, L[a][1])
			VPANDQ(mask44, L[a][1], L[a][1])
			VPSRLQ(U8(24), uhi, L[a][2])
			if isFirst {
				VPORQ(hibit, L[a][2], fm[a].lanes, L[a][2]) // empty lanes stay 0
			} else {
				VPORQ(hibit, L[a][2], L[a][2])
			}
		}
		ADDQ(U32(128*accs), ptr)
	}
	load(true)
	for a := range accs {
		for i := range 3 {
			VPADDQ(L[a][i], H[a][i], H[a][i])
		}
	}
	Label("ifma_loop")
	DECQ(n)
	JZ(LabelRef("ifma_last"))
	load(false)
	for a := range accs {
		ifma.Mul(H[a], L[a], G[a], r, k, true)
	}
	JMP(LabelRef("ifma_loop"))

	Label("ifma_last")
	for a := range accs {
		var b [3]VecVirtual
		for i := range b {
			b[i] = ZMM()
			VMOVDQU64(parked.Offset(64*(3*a+i)), b[i])
		}
		var p [5]Op
		for i, v := range ifma.Times20(b, k) {
			p[i] = v
		}
		// No carry step: the columns (below 2^55) of all 16 lanes sum
		// to less than 2^59, which ifma.PackH44 carries completely.
		ifma.Products(H[a], L[a], G[a], p, k, false)
	}
	// Sum the accumulators, then the lanes.
	for a := 1; a < accs; a++ {
		for i := range 3 {
			VPADDQ(L[a][i], L[0][i], L[0][i])
		}
	}
	out := ifma.HSum(L[0], G[0])
	VZEROUPPER()
	h0, h1, h2 := ifma.PackH44(out[0], out[1], out[2])
	tp := Load(Param("tail").Base(), GP64())
	tn := Load(Param("tail").Len(), GP64())
	SHRQ(U8(4), tn)
	// The key and state pointers again: keeping them in registers through
	// the kernel would take two of the few general registers.
	scalarBlocks(h0, h1, h2, Mem{Base: Load(Param("r"), GP64())}, tp, tn, "ifma_tail")
	hq := Mem{Base: Load(Param("h"), GP64())}
	MOVQ(h0, hq)
	MOVQ(h1, hq.Offset(8))
	MOVQ(h2, hq.Offset(16))
	RET()
}

// ifmaPowers computes, from the clamped r at rp, the loop multiplier r^16
// in every lane and, per accumulator, the power each lane ends with: the
// loads interleave two ZMMs' quadwords, so lane q of accumulator a holds
// block 8a + q/2 (q even) or 8a + 4 + q/2 (q odd) of a group and needs
// r^(16 - block). Both come as three limb vectors b0, b1, b2, partially
// reduced (below 2^45).
//
// The powers fill the lanes of one vector at a time, doubling the count
// with each multiplication: r^2 (a squaring, all lanes), then r^3, r^4,
// then r^5..r^8, then r^9..r^16. That is four multiplications, each
// waiting for the one before, where squaring and blending per lane took
// seven. The lanes are filled in the order the accumulators need, so the
// only lane moves are blends and broadcasts of lane 0 (the kernel is bound
// by its vector instructions: the final permutes this saves made 1 KiB
// 3-4% faster).
func ifmaPowers(rp Mem, k ifma.Consts) (main [3]VecVirtual, final [ifmaAccs][3]VecVirtual) {
	type num = ifma.Num
	newNum := ifma.NewNum
	l0, l1, l2 := ifma.LoadR44(rp)
	r1 := newNum()
	VPBROADCASTQ(l0, r1[0])
	VPBROADCASTQ(l1, r1[1])
	VPBROADCASTQ(l2, r1[2])

	ext := func(b [3]VecVirtual) [5]VecVirtual { return ifma.Times20(b, k) }
	mul := func(a num, bx [5]VecVirtual) num {
		d := ifma.Copy(a)
		lo, hi := newNum(), newNum()
		var ops [5]Op
		for i := range ops {
			ops[i] = bx[i]
		}
		ifma.Mul(d, lo, hi, ops, k, false)
		return d
	}
	blend := func(base num, picks map[uint16]num) num {
		d := ifma.Copy(base)
		for bits, src := range sortedPicks(picks) {
			ifma.BlendInto(d, src, bits)
		}
		return d
	}
	lane0 := ifma.Lane0

	// Lane q of an accumulator holds its block q/2 (q even) or 4 + q/2
	// (q odd), which needs the power 8 - block (accumulator 1) or
	// 16 - block (accumulator 0): r^8, r^4, r^7, r^3, r^6, r^2, r^5, r^1
	// for accumulator 1, times r^8 for accumulator 0. The doubling chain
	// builds them in that order, each power in two neighbouring lanes
	// until the last blend, so that no permute is needed afterwards.
	r2 := ifma.Square(r1, k)
	// q = [r^2, r^2, r, r, r^2, r^2, r, r]; m2 = q·r^2 (lanes 0-3: r^4,
	// r^4, r^3, r^3)
	q := blend(r1, map[uint16]num{0x33: r2})
	m2 := mul(q, ext(r2))
	// p4 = [r^4, r^4, r^3, r^3, r^2, r^2, r, r]; m3 = p4·r^4 = [r^8, r^8,
	// r^7, r^7, r^6, r^6, r^5, r^5]
	p4 := blend(q, map[uint16]num{0x0f: m2})
	m3 := mul(p4, ext(lane0(m2)))
	final[1] = blend(m3, map[uint16]num{0xaa: p4})
	final[0] = mul(final[1], ext(lane0(m3)))
	main = lane0(final[0]) // r^16
	return
}

// ifmaMasks returns the table of the first group's masks, 16 bytes per
// number z of empty lanes in front (0..15): per accumulator a, four
// 16-bit words: the quadwords of its two loads that hold message (x covers
// its blocks 0-3, y blocks 4-7), the lanes that get the 2^128 bit, and the
// lane where h enters, the first real block's (none in accumulator 0 when
// z >= 8, none in accumulator 1 when z < 8). Loading them into opmask
// registers replaces some sixty scalar instructions per call.
func ifmaMasks() Mem {
	if ifmaMaskTable != nil {
		return *ifmaMaskTable
	}
	m := GLOBL("polyIFMAMasks", attr.RODATA|attr.NOPTR)
	// quads is the quadword mask (two bits per block) of a 4-block load
	// starting at block first: its blocks below z are padding.
	quads := func(z, first int) uint16 {
		return uint16(0xff<<(2*min(max(z-first, 0), 4))) & 0xff
	}
	lowest := func(x uint16) uint16 { return x & -x }
	for z := range 16 {
		for a := range ifmaAccs {
			x, y := quads(z, 8*a), quads(z, 8*a+4)
			lanes := x&0x55 | y&0xaa
			h := lowest(x & 0x55)
			if h == 0 {
				h = lowest(y & 0xaa)
			}
			if z/8 != a {
				h = 0
			}
			for i, w := range []uint16{x, y, lanes, h} {
				DATA(16*z+8*a+2*i, U16(w))
			}
		}
	}
	ifmaMaskTable = &m
	return m
}

// ifmaMaskTable is the table once ifmaMasks has emitted it.
var ifmaMaskTable *Mem

func log2(n int) int {
	k := 0
	for n > 1 {
		n >>= 1
		k++
	}
	return k
}

// sortedPicks orders blend picks by mask so the output is deterministic
// (map iteration order is not).
func sortedPicks[T any](m map[uint16]T) func(yield func(uint16, T) bool) {
	return func(yield func(uint16, T) bool) {
		keys := make([]int, 0, len(m))
		for k := range m {
			keys = append(keys, int(k))
		}
		sort.Ints(keys)
		for _, k := range keys {
			if !yield(uint16(k), m[uint16(k)]) {
				return
			}
		}
	}
}
