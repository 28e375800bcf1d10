package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// avx2 generates polyAVX2: 4 lanes, one block per lane, in radix 2^26
// (limbs at bits 0, 26, 52, 78, 104) with VPMULUDQ's 32x32->64 products.
// Each loop iteration adds 4 blocks and multiplies every lane by r^4; the
// last multiplies each lane by its own power of r instead (both tables are
// computed on entry by avx2Powers), and the lanes are summed. With
// 2^130 = 5 mod p,
//
//	d0 = h0·r0 + 5(h1·r4 + h2·r3 + h3·r2 + h4·r1)
//	d1 = h0·r1 + h1·r0 + 5(h2·r4 + h3·r3 + h4·r2)    and so on,
//
// taking the multiples 5·ri from a table on the stack. Accumulator limbs
// stay below 2^27 and the tables' below 2^29, so a column of five products
// stays below 2^59. Register budget: 5 accumulator limbs, 5 product columns, 2 scratch
// and 2 constants: 14 of the 16 YMM registers (avo issue #146 would
// silently hand out Y16 and up; main.go checks for it).
func avx2() {
	// Not NOSPLIT: the frame holds two 9-vector tables of powers.
	TEXT("polyAVX2", 0, "func(h *[3]uint64, r *[2]uint64, msg []byte)")
	Doc("polyAVX2 absorbs len(msg)/16 blocks, 4 per iteration (len(msg) a positive",
		"multiple of 64). r is the clamped key half r.")
	Pragma("noescape")

	hp := Mem{Base: Load(Param("h"), GP64())}
	rp := Mem{Base: Load(Param("r"), GP64())}
	ptr := Load(Param("msg").Base(), GP64())
	n := Load(Param("msg").Len(), GP64())
	SHRQ(U8(6), n)

	bcst := func(v uint64) VecVirtual {
		g, y := GP64(), YMM()
		MOVQ(U64(v), g)
		VMOVQ(g, y.AsX())
		VPBROADCASTQ(y.AsX(), y)
		return y
	}
	mask := bcst(1<<26 - 1)

	var H, D [5]VecVirtual
	for i := range H {
		H[i], D[i] = YMM(), YMM()
	}
	t, c := YMM(), YMM()

	// Two tables of 9 vectors (b0..b4, 5·b1..5·b4) on the stack: first r
	// and a blend of r^2, r and 1; then r^4 in every lane (the loop
	// multiplier) and the final per-lane powers.
	frame := AllocLocal(2 * 9 * 32)
	tabMain, tabFinal := frame, frame.Offset(9*32)
	avx2Powers(rp, H, D, t, c, mask, tabMain, tabFinal)

	hibit := bcst(1 << 24) // 2^128 at limb 4 (bit 104)
	l := loadH26(hp)
	for i := range H {
		VMOVQ(l[i], H[i].AsX())
	}

	Label("avx2_loop")
	x, y, lo, hi := D[0], D[1], D[2], D[3]
	VMOVDQU(Mem{Base: ptr}, x)
	VMOVDQU(Mem{Base: ptr, Disp: 32}, y)
	VPUNPCKLQDQ(y, x, lo)
	VPUNPCKHQDQ(y, x, hi)
	// m0 = lo & mask, m1 = lo>>26 & mask, m2 = (lo>>52 | hi<<12) & mask,
	// m3 = hi>>14 & mask, m4 = hi>>40 | 2^24
	VPAND(mask, lo, t)
	VPADDQ(t, H[0], H[0])
	VPSRLQ(U8(26), lo, t)
	VPAND(mask, t, t)
	VPADDQ(t, H[1], H[1])
	VPSRLQ(U8(52), lo, t)
	VPSLLQ(U8(12), hi, c)
	VPOR(c, t, t)
	VPAND(mask, t, t)
	VPADDQ(t, H[2], H[2])
	VPSRLQ(U8(14), hi, t)
	VPAND(mask, t, t)
	VPADDQ(t, H[3], H[3])
	VPSRLQ(U8(40), hi, t)
	VPOR(hibit, t, t)
	VPADDQ(t, H[4], H[4])

	ADDQ(U8(64), ptr)
	DECQ(n)
	JZ(LabelRef("avx2_last"))
	avx2Mul(H, D, t, c, mask, tabMain, 0)
	JMP(LabelRef("avx2_loop"))

	Label("avx2_last")
	avx2Mul(H, D, t, c, mask, tabFinal, 0)
	var out [5]GPVirtual
	for i := range H {
		VEXTRACTI128(U8(1), H[i], t.AsX())
		VPADDQ(t.AsX(), H[i].AsX(), H[i].AsX())
		VPSHUFD(U8(0x4e), H[i].AsX(), t.AsX())
		VPADDQ(t.AsX(), H[i].AsX(), H[i].AsX())
		out[i] = GP64()
		VMOVQ(H[i].AsX(), out[i])
	}
	storeH26(hp, out)
	VZEROUPPER()
	RET()
}

// avx2Powers fills tabMain with r^4 in every lane and tabFinal with the
// power each lane ends with: the loads interleave two YMMs' quadwords, so
// lanes hold blocks 0, 2, 1, 3 of a group and need r^4, r^2, r^3, r^1.
// With v1 = [r^2, r^2, r^2, r] and v2 = [r^2, 1, r, 1], that is v1·v2.
// Registers h, d, t, c are scratch; tabMain holds r first and tabFinal v2.
func avx2Powers(rp Mem, h, d [5]VecVirtual, t, c, mask VecVirtual, tabMain, tabFinal Mem) {
	b := func(tab Mem, i int) Mem { return tab.Offset(32 * i) }
	s := func(tab Mem, i int) Mem { return tab.Offset(32 * (4 + i)) }
	// store writes limb i of a table (and 5 times it, for i >= 1) from v.
	store := func(tab Mem, i int, v VecVirtual) {
		VMOVDQU(v, b(tab, i))
		if i > 0 {
			VPSLLQ(U8(2), v, c)
			VPADDQ(v, c, c)
			VMOVDQU(c, s(tab, i))
		}
	}
	l := loadR26(rp)
	for i := range h {
		VMOVQ(l[i], h[i].AsX())
		VPBROADCASTQ(h[i].AsX(), h[i])
		store(tabMain, i, h[i])
	}
	avx2Mul(h, d, t, c, mask, tabMain, 0) // h = r^2
	// v2 into tabFinal: lane 0 r^2, lane 2 r, lanes 1 and 3 the number 1.
	one := d[0]
	VPSRLQ(U8(25), mask, one) // 1 in every lane
	for i := range h {
		if i == 0 {
			VMOVDQU(one, t)
		} else {
			VPXOR(t, t, t)
		}
		VPBLENDD(U8(0x03), h[i], t, t)
		VPBLENDD(U8(0x30), b(tabMain, i), t, t)
		store(tabFinal, i, t)
		// v1 in place: lane 3 takes r
		VPBLENDD(U8(0xc0), b(tabMain, i), h[i], h[i])
	}
	avx2Mul(h, d, t, c, mask, tabFinal, 0) // h = v1·v2
	for i := range h {
		store(tabFinal, i, h[i])
		VPERMQ(U8(0x00), h[i], t) // r^4 from lane 0
		store(tabMain, i, t)
	}
}

// avx2Mul sets h = h·b with d as product columns, t and c as scratch; b is
// the 9-vector table row at byte offset off: r0..r4, 5·r1..5·r4.
func avx2Mul(h, d [5]VecVirtual, t, c, mask VecVirtual, tab Mem, off int) {
	r := func(i int) Mem { return tab.Offset(off + 32*i) }     // r_i
	s := func(i int) Mem { return tab.Offset(off + 32*(4+i)) } // 5·r_i, i >= 1
	for i := range 5 {
		// column i: h_j · b_(i-j), wrapping with 5· for j > i
		for j := range 5 {
			var b Mem
			if j <= i {
				b = r(i - j)
			} else {
				b = s(5 + i - j)
			}
			if j == 0 {
				VPMULUDQ(b, h[j], d[i])
				continue
			}
			VPMULUDQ(b, h[j], t)
			VPADDQ(t, d[i], d[i])
		}
	}
	// Carry in the order of the 2^26-radix reference implementations, with
	// each limb's final value written back to h.
	carry := func(from VecVirtual, to VecVirtual, dst VecVirtual) {
		VPSRLQ(U8(26), from, c)
		VPAND(mask, from, dst)
		VPADDQ(c, to, to)
	}
	carry(d[3], d[4], d[3])
	carry(d[0], d[1], d[0])
	// d4 -> 5·c into d0
	VPSRLQ(U8(26), d[4], c)
	VPAND(mask, d[4], h[4])
	VPADDQ(c, d[0], d[0])
	VPSLLQ(U8(2), c, c)
	VPADDQ(c, d[0], d[0])
	carry(d[1], d[2], h[1])
	carry(d[2], d[3], h[2])
	carry(d[0], h[1], h[0])
	carry(d[3], h[4], h[3])
}
