package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// ifma generates polyIFMA: accs accumulators of 8 lanes each, one block per
// lane, in radix 2^44 (limbs at bits 0, 44 and 88). Each loop iteration
// adds 8·accs blocks and multiplies every lane by r^(8·accs); the last
// iteration instead multiplies each lane by the power of r that brings its
// block to its place in the message (from the table, see
// internal/poly1305/table_amd64.go), and the lanes are summed.
//
// VPMADD52LUQ/HUQ multiply the low 52 bits of each operand and add the low
// or high 52 bits of the 104-bit product. Operands stay below 2^52: the
// accumulator limbs below 2^46 after the partial carry and message
// addition, the powers' limbs below 2^44 and their multiples of 20 below
// 2^49. In radix 2^44 with p = 2^130 - 5, a product at limb position 132
// is worth 20 at position 0, so
//
//	d0 = a0·b0 + a1·20b2 + a2·20b1
//	d1 = a0·b1 + a1·b0  + a2·20b2
//	d2 = a0·b2 + a1·b1  + a2·b0
//
// The high halves sit 52 bits up: the high half of column 0 lands at bit
// 52 = 44 + 8 (column 1 shifted left 8), column 1's at column 2 shifted
// left 8, and column 2's at bit 140, worth 5·2^10 at bit 0.
func ifma(accs int) {
	name := "polyIFMA"
	TEXT(name, NOSPLIT, "func(h *[3]uint64, tab *[88]uint64, msg []byte)")
	Doc(name+fmt.Sprintf(" absorbs len(msg)/16 blocks, %d per iteration (len(msg) a", 8*accs),
		fmt.Sprintf("positive multiple of %d), with the table built by buildIFMA.", 128*accs))
	Pragma("noescape")

	hp := Mem{Base: Load(Param("h"), GP64())}
	tab := Mem{Base: Load(Param("tab"), GP64())}
	ptr := Load(Param("msg").Base(), GP64())
	n := Load(Param("msg").Len(), GP64())
	SHRQ(U8(7+log2(accs)), n) // iterations

	bcst := func(v uint64) VecVirtual {
		g, z := GP64(), ZMM()
		MOVQ(U64(v), g)
		VPBROADCASTQ(g, z)
		return z
	}
	mask44 := bcst(1<<44 - 1)
	hibit := bcst(1 << 40) // 2^128 at limb 2 (bit 88)

	// r^(8·accs), broadcast: b0, b1, b2, 20·b1, 20·b2
	var r [5]Op
	for i := range r {
		z := ZMM()
		VPBROADCASTQ(tab.Offset(8*i), z)
		r[i] = z
	}

	// Accumulators: h enters lane 0 (block 0) of accumulator 0.
	H := make([][3]VecVirtual, accs)
	l0, l1, l2 := loadH44(hp)
	for a := range H {
		for i := range 3 {
			H[a][i] = ZMM()
		}
	}
	VMOVQ(l0, H[0][0].AsX())
	VMOVQ(l1, H[0][1].AsX())
	VMOVQ(l2, H[0][2].AsX())
	for a := 1; a < accs; a++ {
		for i := range 3 {
			VPXORQ(H[a][i], H[a][i], H[a][i])
		}
	}

	// Per-accumulator scratch: product columns (lo, hi) double as message
	// temporaries before the multiplication.
	L := make([][3]VecVirtual, accs)
	G := make([][3]VecVirtual, accs)
	for a := range L {
		for i := range 3 {
			L[a][i], G[a][i] = ZMM(), ZMM()
		}
	}

	Label("ifma_loop")
	for a := range accs {
		x, y, lo, hi := L[a][0], L[a][1], L[a][2], G[a][0]
		VMOVDQU64(Mem{Base: ptr, Disp: 128 * a}, x)
		VMOVDQU64(Mem{Base: ptr, Disp: 128*a + 64}, y)
		VPUNPCKLQDQ(y, x, lo)
		VPUNPCKHQDQ(y, x, hi)
		// m0 = lo & mask; m1 = (lo>>44 | hi<<20) & mask; m2 = hi>>24 | 2^40
		t, u := G[a][1], G[a][2]
		VPANDQ(mask44, lo, t)
		VPADDQ(t, H[a][0], H[a][0])
		VPSRLQ(U8(44), lo, t)
		VPSLLQ(U8(20), hi, u)
		VPTERNLOGQ(U8(0xa8), mask44, u, t) // t = (t | u) & mask
		VPADDQ(t, H[a][1], H[a][1])
		VPSRLQ(U8(24), hi, t)
		VPORQ(hibit, t, t)
		VPADDQ(t, H[a][2], H[a][2])
	}
	ADDQ(U32(128*accs), ptr)
	DECQ(n)
	JZ(LabelRef("ifma_last"))
	for a := range accs {
		ifmaMul(H[a], L[a], G[a], r, mask44)
	}
	JMP(LabelRef("ifma_loop"))

	Label("ifma_last")
	for a := range accs {
		var p [5]Op
		for i := range p {
			p[i] = tab.Offset(8 * (8 + 40*a + 8*i))
		}
		ifmaMul(H[a], L[a], G[a], p, mask44)
	}
	// Sum the accumulators, then the lanes.
	for a := 1; a < accs; a++ {
		for i := range 3 {
			VPADDQ(H[a][i], H[0][i], H[0][i])
		}
	}
	var out [3]GPVirtual
	for i := range 3 {
		z := H[0][i]
		t := L[0][i]
		VEXTRACTI64X4(U8(1), z, t.AsY())
		VPADDQ(t.AsY(), z.AsY(), z.AsY())
		VEXTRACTI32X4(U8(1), z.AsY(), t.AsX())
		VPADDQ(t.AsX(), z.AsX(), z.AsX())
		VPSHUFD(U8(0x4e), z.AsX(), t.AsX())
		VPADDQ(t.AsX(), z.AsX(), z.AsX())
		out[i] = GP64()
		VMOVQ(z.AsX(), out[i])
	}
	storeH44(hp, out[0], out[1], out[2])
	VZEROUPPER()
	RET()
}

// ifmaMul sets h = h·b (partially reduced; limbs below 2^45 after) using
// lo and hi as product columns. b holds b0, b1, b2, 20·b1, 20·b2.
func ifmaMul(h, lo, hi [3]VecVirtual, b [5]Op, mask44 VecVirtual) {
	b0, b1, b2, s1, s2 := b[0], b[1], b[2], b[3], b[4]
	terms := [3][3][2]Op{
		{{h[0], b0}, {h[1], s2}, {h[2], s1}},
		{{h[0], b1}, {h[1], b0}, {h[2], s2}},
		{{h[0], b2}, {h[1], b1}, {h[2], b0}},
	}
	for i := range 3 {
		VPXORQ(lo[i], lo[i], lo[i])
		VPXORQ(hi[i], hi[i], hi[i])
	}
	// Interleave the columns so that consecutive multiply-adds go to
	// different destinations (each one waits for its destination).
	for k := range 3 {
		for i := range 3 {
			VPMADD52LUQ(terms[i][k][1], terms[i][k][0], lo[i])
			VPMADD52HUQ(terms[i][k][1], terms[i][k][0], hi[i])
		}
	}
	// d0 = lo0 + 5·hi2<<10, d1 = lo1 + hi0<<8, d2 = lo2 + hi1<<8
	VPSLLQ(U8(8), hi[0], hi[0])
	VPADDQ(hi[0], lo[1], lo[1])
	VPSLLQ(U8(8), hi[1], hi[1])
	VPADDQ(hi[1], lo[2], lo[2])
	VPSLLQ(U8(2), hi[2], hi[0])
	VPADDQ(hi[0], hi[2], hi[2])
	VPSLLQ(U8(10), hi[2], hi[2])
	VPADDQ(hi[2], lo[0], lo[0])
	// One carry step for all three limbs at once (d < 2^55, so every
	// carry is below 2^13):
	//   h0 = d0 & mask + 5·(d2 >> 42), h1 = d1 & mask + d0 >> 44,
	//   h2 = d2 & (2^42-1) + d1 >> 44
	VPSRLQ(U8(44), lo[0], hi[0])
	VPSRLQ(U8(44), lo[1], hi[1])
	VPSRLQ(U8(42), lo[2], hi[2])
	VPANDQ(mask44, lo[0], h[0])
	VPANDQ(mask44, lo[1], h[1])
	VPSLLQ(U8(22), lo[2], lo[2])
	VPSRLQ(U8(22), lo[2], h[2])
	VPADDQ(hi[0], h[1], h[1])
	VPADDQ(hi[1], h[2], h[2])
	VPADDQ(hi[2], h[0], h[0])
	VPSLLQ(U8(2), hi[2], hi[2])
	VPADDQ(hi[2], h[0], h[0])
}

func log2(n int) int {
	k := 0
	for n > 1 {
		n >>= 1
		k++
	}
	return k
}
