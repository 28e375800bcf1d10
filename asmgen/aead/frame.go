package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
)

// frame64 is a 64-byte aligned area of a kernel's frame for the vectors it
// keeps there (Go aligns the stack pointer to 8 bytes only), so that no
// 64-byte access straddles two cache lines. On Zen 4 the alignment
// measured the same as none (docs/KERNELS.md); the 16-block kernels keep
// it because they address their areas from a base register anyway, which
// their run-time offsets into the power table need. Areas are handed out
// as offsets from the aligned base, which a kernel computes into a
// register (base) where it needs it: the rounds take every general
// register, so no register holds it throughout.
type frame64 struct{ local Mem }

func newFrame64(size int) *frame64 { return &frame64{local: AllocLocal(size + 64)} }

// base returns the aligned address, computed into a new register.
func (f *frame64) base() Mem {
	b := GP64()
	LEAQ(f.local, b)
	ADDQ(U8(63), b)
	ANDQ(I8(-64), b)
	return Mem{Base: b}
}

// layout64 hands out consecutive areas of a frame64, each a multiple of 64
// bytes.
type layout64 struct{ next int }

func (l *layout64) take(n int) int {
	off := l.next
	l.next += roundUp(n, 64)
	return off
}

// ciphertextToFrame copies the kernel's src, at most max bytes, to the
// frame area at off from base b, zero past its end: Open runs Poly1305
// over that copy in lanes, whose last group may read up to the area's end.
func ciphertextToFrame(b Mem, off, max int) {
	Comment("The ciphertext to the frame, zero past its end.")
	src, n := GP64(), GP64()
	Load(Param("src").Base(), src)
	Load(Param("src").Len(), n)
	for o := 0; o < max; o += 64 {
		guarded(n, o, func() {
			km := byteMask(n, o)
			v := ZMM()
			VMOVDQU8_Z(Mem{Base: src, Disp: o}, km, v)
			VMOVDQU64(v, b.Offset(off+o))
		})
	}
}
