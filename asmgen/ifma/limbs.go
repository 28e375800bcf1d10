package ifma

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// LoadH44 reads h (radix 2^64, h[2] <= 5) and splits it into 44-bit limbs
// l0, l1 < 2^44 and l2 < 2^44 in general registers.
func LoadH44(hp Mem) (l0, l1, l2 GPVirtual) {
	top := GP64()
	MOVQ(hp.Offset(16), top)
	return Split44(hp, top)
}

// LoadR44 splits the two-word number at rp (the clamped r) into 44-bit
// limbs.
func LoadR44(rp Mem) (l0, l1, l2 GPVirtual) {
	top := GP64()
	XORQ(top, top)
	return Split44(rp, top)
}

// Split44 splits the number with low words at p and top word in l2.
func Split44(p Mem, l2 GPVirtual) (l0, l1, _ GPVirtual) {
	h0, h1 := GP64(), GP64()
	MOVQ(p, h0)
	MOVQ(p.Offset(8), h1)
	return SplitH44(h0, h1, l2)
}

// SplitH44 splits h (radix 2^64 in registers, h2 <= 7) into 44-bit limbs
// l0, l1 below 2^44 and l2 below 2^43; l2 is h2's register, and h1's
// register is clobbered.
func SplitH44(h0, h1, h2 GPVirtual) (l0, l1, l2 GPVirtual) {
	l0, l1 = GP64(), GP64()
	mask := GP64()
	MOVQ(U64(1<<44-1), mask)
	MOVQ(h0, l0)
	ANDQ(mask, l0)
	MOVQ(h0, l1)
	SHRQ(U8(44), h1, l1) // l1 = h0>>44 | h1<<20
	ANDQ(mask, l1)
	SHLQ(U8(40), h2)
	SHRQ(U8(24), h1)
	ORQ(h1, h2) // l2 = h1>>24 | h2<<40
	return l0, l1, h2
}

// HSum sums the eight lanes of each of cols into a general register,
// with tmp as scratch (cols are clobbered).
func HSum(cols, tmp [3]VecVirtual) [3]GPVirtual {
	var out [3]GPVirtual
	for i, z := range cols {
		t := tmp[i]
		VEXTRACTI64X4(U8(1), z, t.AsY())
		VPADDQ(t.AsY(), z.AsY(), z.AsY())
		VEXTRACTI32X4(U8(1), z.AsY(), t.AsX())
		VPADDQ(t.AsX(), z.AsX(), z.AsX())
		VPSHUFD(U8(0x4e), z.AsX(), t.AsX())
		VPADDQ(t.AsX(), z.AsX(), z.AsX())
		out[i] = GP64()
		VMOVQ(z.AsX(), out[i])
	}
	return out
}

// Carry44 carries 44-bit limbs l0, l1, l2 (each below 2^60), in place,
// into limbs below 2^44, 2^44 + 2^13 and 2^42, folding bits 130 and up
// back times 5: good for MulScalar and the vector products, not yet
// unique (PackH44 finishes the carry).
func Carry44(l0, l1, l2 GPVirtual) {
	mask, c := GP64(), GP64()
	MOVQ(U64(1<<44-1), mask)
	carry44(l0, l1, l2, mask, c)
}

// carry44 is Carry44 with the mask (2^44 - 1, which it leaves so) and a
// scratch register.
func carry44(l0, l1, l2, mask, c GPVirtual) {
	carryLimb(l0, l1, mask, c)
	carryLimb(l1, l2, mask, c)
	// bits 130 and up of l2 (bit 42 of the limb) times 5 into l0
	MOVQ(l2, c)
	SHRQ(U8(42), c)
	SHRQ(U8(2), mask) // 2^42 - 1
	ANDQ(mask, l2)
	LEAQ(Mem{Base: c, Index: c, Scale: 4}, c)
	ADDQ(c, l0)
	SHLQ(U8(2), mask)
	ORQ(U8(3), mask) // 2^44 - 1 again
	carryLimb(l0, l1, mask, c)
}

// carryLimb moves from's bits 44 and up into to.
func carryLimb(from, to, mask, c GPVirtual) {
	MOVQ(from, c)
	SHRQ(U8(44), c)
	ANDQ(mask, from)
	ADDQ(c, to)
}

// PackH44 carries 44-bit limbs l0, l1, l2 (each below 2^60) completely,
// folding bits 130 and up back times 5, and returns them in radix 2^64
// with h2 <= 4.
func PackH44(l0, l1, l2 GPVirtual) (h0, h1, h2 GPVirtual) {
	mask, c := GP64(), GP64()
	MOVQ(U64(1<<44-1), mask)
	carry44(l0, l1, l2, mask, c)
	carryLimb(l1, l2, mask, c)
	// pack: h0 = l0 | l1<<44, h1 = l1>>20 | l2<<24, h2 = l2>>40
	h0, h1 = GP64(), GP64()
	MOVQ(l1, h0)
	SHLQ(U8(44), h0)
	ORQ(l0, h0)
	MOVQ(l2, h1)
	SHLQ(U8(24), h1)
	SHRQ(U8(20), l1)
	ORQ(l1, h1)
	SHRQ(U8(40), l2)
	return h0, h1, l2
}
