package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// loadH26 reads h (radix 2^64, h[2] <= 5) and splits it into 26-bit limbs
// (the top one below 2^27) in general registers.
func loadH26(hp Mem) [5]GPVirtual {
	h2 := GP64()
	MOVQ(hp.Offset(16), h2)
	return split26(hp, h2)
}

// loadR26 splits the two-word number at rp (the clamped r) into 26-bit
// limbs.
func loadR26(rp Mem) [5]GPVirtual {
	h2 := GP64()
	XORQ(h2, h2)
	return split26(rp, h2)
}

// split26 splits the number with low words at p and top word h2.
func split26(p Mem, h2 GPVirtual) [5]GPVirtual {
	h0, h1 := GP64(), GP64()
	MOVQ(p, h0)
	MOVQ(p.Offset(8), h1)
	var l [5]GPVirtual
	for i := range l {
		l[i] = GP64()
	}
	mask := GP64()
	MOVQ(U32(1<<26-1), mask)
	MOVQ(h0, l[0])
	ANDQ(mask, l[0])
	MOVQ(h0, l[1])
	SHRQ(U8(26), l[1])
	ANDQ(mask, l[1])
	MOVQ(h0, l[2])
	SHRQ(U8(52), h1, l[2]) // h0>>52 | h1<<12
	ANDQ(mask, l[2])
	MOVQ(h1, l[3])
	SHRQ(U8(14), l[3])
	ANDQ(mask, l[3])
	MOVQ(h1, l[4])
	SHRQ(U8(40), l[4])
	SHLQ(U8(24), h2)
	ORQ(h2, l[4])
	return l
}

// storeH26 carries 26-bit limbs (each below 2^60) completely, folding bits
// 130 and up back times 5, and writes them to h in radix 2^64, h[2] <= 4.
func storeH26(hp Mem, l [5]GPVirtual) {
	mask, c := GP64(), GP64()
	MOVQ(U32(1<<26-1), mask)
	carry := func(i int) {
		MOVQ(l[i], c)
		SHRQ(U8(26), c)
		ANDQ(mask, l[i])
		ADDQ(c, l[i+1])
	}
	for i := range 4 {
		carry(i)
	}
	MOVQ(l[4], c)
	SHRQ(U8(26), c)
	ANDQ(mask, l[4])
	LEAQ(Mem{Base: c, Index: c, Scale: 4}, c)
	ADDQ(c, l[0])
	for i := range 4 {
		carry(i)
	}
	// h0 = l0 | l1<<26 | l2<<52; h1 = l2>>12 | l3<<14 | l4<<40; h2 = l4>>24
	t := GP64()
	SHLQ(U8(26), l[1])
	ORQ(l[1], l[0])
	MOVQ(l[2], t)
	SHLQ(U8(52), t)
	ORQ(t, l[0])
	MOVQ(l[0], hp)
	SHRQ(U8(12), l[2])
	SHLQ(U8(14), l[3])
	ORQ(l[3], l[2])
	MOVQ(l[4], t)
	SHLQ(U8(40), t)
	ORQ(t, l[2])
	MOVQ(l[2], hp.Offset(8))
	SHRQ(U8(24), l[4])
	MOVQ(l[4], hp.Offset(16))
}
