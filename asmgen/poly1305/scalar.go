package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// scalar generates polyScalar: one block at a time in radix 2^64 with
// MULQ, which every amd64 CPU has. h·r needs four 64x64 products and two
// small ones (h[2] < 16 and r < 2^60 after clamping); the part of the
// product at or above 2^130 is folded back times 5 = 4 + 1, as in the
// generic code.
func scalar() {
	TEXT("polyScalar", NOSPLIT, "func(h *[3]uint64, r *[2]uint64, msg []byte)")
	Doc("polyScalar absorbs len(msg)/16 blocks one at a time (len(msg) a multiple of 16).")
	Pragma("noescape")

	hp := Mem{Base: Load(Param("h"), GP64())}
	rp := Mem{Base: Load(Param("r"), GP64())}
	ptr := Load(Param("msg").Base(), GP64())
	n := Load(Param("msg").Len(), GP64())
	SHRQ(U8(4), n)

	h0, h1, h2 := GP64(), GP64(), GP64()
	MOVQ(hp, h0)
	MOVQ(hp.Offset(8), h1)
	MOVQ(hp.Offset(16), h2)
	scalarBlocks(h0, h1, h2, rp, ptr, n, "scalar")
	MOVQ(h0, hp)
	MOVQ(h1, hp.Offset(8))
	MOVQ(h2, hp.Offset(16))
	RET()
}

// scalarBlocks absorbs n blocks from ptr into h0, h1, h2 (radix 2^64,
// h2 <= 5 on entry and on exit) with the clamped r at rp; n may be 0.
// Labels start with prefix.
func scalarBlocks(h0, h1, h2 GPVirtual, rp Mem, ptr, n Register, prefix string) {
	r0, r1 := GP64(), GP64()
	MOVQ(rp, r0)
	MOVQ(rp.Offset(8), r1)

	TESTQ(n, n)
	JZ(LabelRef(prefix + "_done"))
	Label(prefix + "_loop")
	ADDQ(Mem{Base: ptr}, h0)
	ADCQ(Mem{Base: ptr, Disp: 8}, h1)
	ADCQ(U8(1), h2)

	t0, t1, t2, t3, tmp := GP64(), GP64(), GP64(), GP64(), GP64()
	// column 0 and the low half of column 1: h0·r0
	MOVQ(r0, RAX)
	MULQ(h0)
	MOVQ(RAX, t0)
	MOVQ(RDX, t1)
	// h0·r1 into columns 1 and 2
	MOVQ(r1, RAX)
	MULQ(h0)
	ADDQ(RAX, t1)
	ADCQ(U8(0), RDX)
	MOVQ(RDX, t2)
	// h1·r0 into columns 1, 2 (carry into 3)
	XORQ(t3, t3)
	MOVQ(r0, RAX)
	MULQ(h1)
	ADDQ(RAX, t1)
	ADCQ(RDX, t2)
	ADCQ(U8(0), t3)
	// h1·r1 into columns 2 and 3
	MOVQ(r1, RAX)
	MULQ(h1)
	ADDQ(RAX, t2)
	ADCQ(RDX, t3)
	// h2·r0 and h2·r1 fit in 64 bits
	MOVQ(h2, tmp)
	IMULQ(r0, tmp)
	IMULQ(r1, h2)
	ADDQ(tmp, t2)
	ADCQ(h2, t3)

	// h = t mod 2^130 + 5·(t >> 130): with c = 4·(t >> 130) in t3:(t2 &^ 3),
	// add c and then c/4.
	MOVQ(t0, h0)
	MOVQ(t1, h1)
	MOVQ(t2, h2)
	ANDQ(U8(3), h2)
	ANDQ(I8(-4), t2)
	ADDQ(t2, h0)
	ADCQ(t3, h1)
	ADCQ(U8(0), h2)
	SHRQ(U8(2), t3, t2)
	SHRQ(U8(2), t3)
	ADDQ(t2, h0)
	ADCQ(t3, h1)
	ADCQ(U8(0), h2)

	ADDQ(U8(16), ptr)
	DECQ(n)
	JNZ(LabelRef(prefix + "_loop"))

	Label(prefix + "_done")
}
