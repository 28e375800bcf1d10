package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// Poly1305 clamping masks (RFC 8439 section 2.5).
const (
	rMask0 = 0x0ffffffc0fffffff
	rMask1 = 0x0ffffffc0ffffffc
)

// Numbers mod p = 2^130 - 5 are kept in radix 2^64, h0 + h1·2^64 +
// h2·2^128, partially reduced: h2 <= 4 between blocks (the same form as
// internal/poly1305's kernels), so h2 <= 7 after a block is added.

// key is the frame area of the one-time key: r0, r1 (clamped), s1 =
// r1 + r1>>2, and the tag's s.
type key struct {
	m Mem
}

func (k key) r0() Mem  { return k.m }
func (k key) r1() Mem  { return k.m.Offset(8) }
func (k key) rs1() Mem { return k.m.Offset(16) }
func (k key) s() Mem   { return k.m.Offset(24) }

const keyBytes = 40

// newKey clamps r0, r1, stores them, r1's s1 and s0, s1 (the tag's s).
func newKey(r0, r1, s0, s1 GPVirtual) key {
	k := key{AllocLocal(keyBytes)}
	m := GP64()
	MOVQ(U64(rMask0), m)
	ANDQ(m, r0)
	MOVQ(U64(rMask1), m)
	ANDQ(m, r1)
	MOVQ(r0, k.r0())
	MOVQ(r1, k.r1())
	MOVQ(r1, m)
	SHRQ(U8(2), m)
	ADDQ(r1, m)
	MOVQ(m, k.rs1())
	MOVQ(s0, k.s())
	MOVQ(s1, k.s().Offset(8))
	return k
}

// acc is a Poly1305 accumulator in general registers.
type acc struct{ h0, h1, h2 GPVirtual }

// newAcc returns an accumulator at 0.
func newAcc() acc {
	a := acc{GP64(), GP64(), GP64()}
	XORQ(a.h0, a.h0)
	XORQ(a.h1, a.h1)
	XORQ(a.h2, a.h2)
	return a
}

// absorb adds the 16-byte block at m (with the 2^128 bit) and multiplies
// by r.
func (a acc) absorb(k key, m Mem) {
	ADDQ(m, a.h0)
	ADCQ(m.Offset(8), a.h1)
	ADCQ(U8(1), a.h2)
	a.mulR(k)
}

// mulR sets h = h·r mod p for the clamped r (h2 <= 7 on entry, <= 4 on
// return). r1 is a multiple of 4, so h1·r1·2^128 = h1·(r1/4)·2^130 ≡
// h1·s1 with s1 = 5·(r1/4) = r1 + r1>>2, and h2·r1·2^192 ≡ h2·s1·2^64:
//
//	c0 = lo(h0·r0) + lo(h1·s1)
//	c1 = hi(h0·r0) + hi(h1·s1) + lo(h0·r1) + lo(h1·r0) + h2·s1
//	c2 = hi(h0·r1) + hi(h1·r0) + h2·r0
//
// four 64x64 products and two small ones; then the bits from 130 up,
// times 5, fold into the bottom.
func (a acc) mulR(k key) {
	h0, h1, h2 := a.h0, a.h1, a.h2
	c0, c1, c2, lo, hi := GP64(), GP64(), GP64(), GP64(), GP64()
	MOVQ(h0, RDX)
	MULXQ(k.r0(), c0, c1)
	MULXQ(k.r1(), lo, c2)
	MOVQ(h1, RDX)
	ADDQ(lo, c1)
	ADCQ(U8(0), c2)
	MULXQ(k.rs1(), lo, hi)
	ADDQ(lo, c0)
	ADCQ(hi, c1)
	ADCQ(U8(0), c2)
	MULXQ(k.r0(), lo, hi)
	ADDQ(lo, c1)
	ADCQ(hi, c2)
	MOVQ(h2, lo)
	IMULQ(k.rs1(), lo)
	IMULQ(k.r0(), h2)
	ADDQ(lo, c1)
	ADCQ(h2, c2)
	fold(a, c0, c1, c2)
}

// fold sets a = c mod 2^130 + 5·(c >> 130) for c = c0 + c1·2^64 +
// c2·2^128 (c2 < 2^62 here, so 5·(c2 >> 2) = (c2 &^ 3) + (c2 >> 2) fits
// a word): one carry chain after the last product, not two. c2 is
// clobbered.
func fold(a acc, c0, c1, c2 GPVirtual) {
	t := GP64()
	MOVQ(c2, a.h2)
	ANDQ(U8(3), a.h2)
	MOVQ(c2, t)
	SHRQ(U8(2), t)
	ANDQ(I8(-4), c2)
	ADDQ(t, c2)
	MOVQ(c0, a.h0)
	MOVQ(c1, a.h1)
	ADDQ(c2, a.h0)
	ADCQ(U8(0), a.h1)
	ADCQ(U8(0), a.h2)
}

// tag reduces h mod p, adds s and returns the tag words, in constant
// time.
func (a acc) tag(k key) (GPVirtual, GPVirtual) {
	h0, h1, h2 := a.h0, a.h1, a.h2
	top := GP64()
	MOVQ(h2, top)
	SHRQ(U8(2), top)
	ANDQ(U8(3), h2)
	LEAQ(Mem{Base: top, Index: top, Scale: 4}, top)
	ADDQ(top, h0)
	ADCQ(U8(0), h1)
	ADCQ(U8(0), h2)
	// now h < 2^130 + 2^64: subtract p if h + 5 reaches 2^130
	t0, t1, t2 := GP64(), GP64(), GP64()
	MOVQ(h0, t0)
	MOVQ(h1, t1)
	MOVQ(h2, t2)
	ADDQ(U8(5), t0)
	ADCQ(U8(0), t1)
	ADCQ(U8(0), t2)
	SHRQ(U8(2), t2) // 1 iff h >= p
	NEGQ(t2)        // mask
	XORQ(h0, t0)
	XORQ(h1, t1)
	ANDQ(t2, t0)
	ANDQ(t2, t1)
	XORQ(t0, h0)
	XORQ(t1, h1)
	ADDQ(k.s(), h0)
	ADCQ(k.s().Offset(8), h1)
	return h0, h1
}

// blocks absorbs n blocks (a register, possibly 0) from ptr, advancing
// ptr and counting n down.
func (a acc) blocks(k key, ptr, n GPVirtual, label string) {
	TESTQ(n, n)
	JZ(LabelRef(label + "_done"))
	Label(label)
	a.absorb(k, Mem{Base: ptr})
	ADDQ(U8(16), ptr)
	DECQ(n)
	JNZ(LabelRef(label))
	Label(label + "_done")
}

// padded absorbs the n bytes at ptr (n a register) zero-padded to whole
// blocks: RFC 8439's additional data. The last partial block is read with
// a masked load (bytes past n are neither read nor faulted on).
func (a acc) padded(k key, ptr, n GPVirtual, label string) {
	nb := GP64()
	MOVQ(n, nb)
	SHRQ(U8(4), nb)
	a.blocks(k, ptr, nb, label)
	rest := GP64()
	MOVQ(n, rest)
	ANDQ(U8(15), rest)
	JZ(LabelRef(label + "_full"))
	km := K()
	m := GP64()
	MOVQ(I32(-1), m)
	BZHIQ(rest, m, m)
	KMOVQ(m, km)
	t := XMM()
	VMOVDQU8_Z(Mem{Base: ptr}, km, t)
	buf := AllocLocal(16)
	VMOVDQU64(t, buf)
	a.absorb(k, buf)
	Label(label + "_full")
}

// last absorbs the rest < 16 bytes of a Poly1305 message (NaCl's
// secretbox, not the AEAD's zero padding), rest a register in 0..15
// counting the bytes at ptr: they and a 1 byte after them, zero-padded,
// without the 2^128 bit. ptr's block was zero-padded in its buffer, so
// its 16 bytes may be read whole.
func (a acc) last(k key, ptr, rest GPVirtual, label string) {
	TESTQ(rest, rest)
	JZ(LabelRef(label + "_none"))
	// the 1 byte is 2^(8·rest): in the low word for rest < 8, else in
	// the high one (SHLX counts modulo 64)
	one, lo, hi, bits := GP64(), GP64(), GP64(), GP64()
	MOVQ(rest, bits)
	SHLQ(U8(3), bits)
	MOVQ(U32(1), one)
	SHLXQ(bits, one, one)
	XORQ(lo, lo)
	XORQ(hi, hi)
	CMPQ(rest, U8(8))
	CMOVQCS(one, lo)
	CMOVQCC(one, hi)
	ADDQ(Mem{Base: ptr}, lo)
	ADCQ(Mem{Base: ptr, Disp: 8}, hi)
	ADDQ(lo, a.h0)
	ADCQ(hi, a.h1)
	ADCQ(U8(0), a.h2)
	a.mulR(k)
	Label(label + "_none")
}
