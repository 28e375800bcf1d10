package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// piece is part of the key stream in a vector register: bytes
// [off, off+width) of the message key stream (block 1 starts at 0).
type piece struct {
	v     Register
	off   int
	width int
}

func vecOf(width int) VecVirtual {
	switch width {
	case 16:
		return XMM()
	case 32:
		return YMM()
	}
	return ZMM()
}

// byteMask returns a mask register with bit i set iff byte off+i of the
// message lies below n, for the piece at off (at most 64 bytes, within
// one 64-byte block of the message's key stream pieces' alignment).
// Computed afresh for each piece: a mask register kept across the
// pieces' branches (guarded) would look live from the function's entry.
func byteMask(n GPVirtual, off int) Op {
	// c = min(max(n - off, 0), 64): BZHI reads only the low byte of its
	// index.
	c, lim := GP64(), GP64()
	MOVQ(n, c)
	XORQ(lim, lim)
	SUBQ(U32(off), c)
	CMOVQLT(lim, c)
	MOVQ(U32(64), lim)
	CMPQ(c, lim)
	CMOVQGT(lim, c)
	w := GP64()
	MOVQ(I32(-1), w)
	BZHIQ(c, w, w)
	k := K()
	KMOVQ(w, k)
	return k
}

// skips numbers the labels of guarded pieces.
var skips int

// guarded emits f only if n > off: a piece wholly past the message gets
// no memory access at all (a masked access with an empty mask still
// costs a microcode assist on some CPUs when it crosses a page, and an
// empty message may come with a nil pointer).
func guarded(n GPVirtual, off int, f func()) {
	skips++
	l := fmtName("skip_aead_%d", skips)
	CMPQ(n, U32(off))
	JLS(LabelRef(l))
	f()
	Label(l)
}

// keyStreamPiece takes one piece of key stream out. Open keeps it in the
// frame at ksOff (nothing is written before the tag is checked); seal
// XORs it into the message's bytes at its offset (masked where the
// message ends, skipped wholly past it), writes them to dst and keeps the
// ciphertext in the frame at ctOff for Poly1305's lanes.
func keyStreamPiece(b Mem, pc piece, open bool, ksOff, ctOff int) {
	if open {
		VMOVDQU64(pc.v, b.Offset(ksOff+pc.off))
		return
	}
	n := GP64()
	Load(Param("src").Len(), n)
	guarded(n, pc.off, func() {
		src, dst := GP64(), GP64()
		Load(Param("src").Base(), src)
		Load(Param("dst").Base(), dst)
		km := byteMask(n, pc.off)
		tv := vecOf(pc.width)
		VMOVDQU8_Z(Mem{Base: src, Disp: pc.off}, km, tv)
		VMOVDQU8_Z(pc.v, km, pc.v)
		VPXORD(tv, pc.v, pc.v)
		VMOVDQU8(pc.v, km, Mem{Base: dst, Disp: pc.off})
		VMOVDQU64(pc.v, b.Offset(ctOff+pc.off))
	})
}
