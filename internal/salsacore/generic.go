package salsacore

import (
	"encoding/binary"
	"math/bits"
)

// quarterRound is the Salsa20 quarterround of the specification, on (y0, y1,
// y2, y3). It is small enough to be inlined, so all sixteen words stay in
// registers.
func quarterRound(a, b, c, d uint32) (uint32, uint32, uint32, uint32) {
	b ^= bits.RotateLeft32(a+d, 7)
	c ^= bits.RotateLeft32(b+a, 9)
	d ^= bits.RotateLeft32(c+b, 13)
	a ^= bits.RotateLeft32(d+c, 18)
	return a, b, c, d
}

// xorBlocksGeneric is the reference kernel: for each 64-byte block of src it
// XORs one keystream block into dst and increments s[8] modulo 2^32.
// len(dst) >= len(src) and len(src) is a multiple of BlockSize; rounds is a
// multiple of 4 of at least 8 (8, 12 or 20).
//
// It is shaped like chachacore's generic kernel, for the same reasons: the
// compiler's output is near the limit of scalar code, so the first column
// round's counter-free quarter rounds are computed once per call, the
// double rounds run in pairs (fewer loop updates and back-edge register
// moves), and the output is XORed eight bytes at a time through fixed-size
// array pointers (no bounds checks, half the loads and stores).
func xorBlocksGeneric(s *State, rounds int, dst, src []byte) {
	c0, c1, c2, c3 := s[0], s[1], s[2], s[3]
	c4, c5, c6, c7 := s[4], s[5], s[6], s[7]
	c9, c10, c11 := s[9], s[10], s[11]
	c12, c13, c14, c15 := s[12], s[13], s[14], s[15]
	counter := s[8]

	// Of the first column round only the quarter round on (x0, x4, x8, x12)
	// reads the low counter word.
	p5, p9, p13, p1 := quarterRound(c5, c9, c13, c1)
	p10, p14, p2, p6 := quarterRound(c10, c14, c2, c6)
	p15, p3, p7, p11 := quarterRound(c15, c3, c7, c11)

	for len(src) >= BlockSize && len(dst) >= BlockSize {
		// Rounds 1 and 2: the column round's counter quarter round, then the
		// row round.
		x0, x4, x8, x12 := quarterRound(c0, c4, counter, c12)
		x5, x9, x13, x1 := p5, p9, p13, p1
		x10, x14, x2, x6 := p10, p14, p2, p6
		x15, x3, x7, x11 := p15, p3, p7, p11
		x0, x1, x2, x3 = quarterRound(x0, x1, x2, x3)
		x5, x6, x7, x4 = quarterRound(x5, x6, x7, x4)
		x10, x11, x8, x9 = quarterRound(x10, x11, x8, x9)
		x15, x12, x13, x14 = quarterRound(x15, x12, x13, x14)

		// Rounds 3 and 4, so that the rest comes in groups of four.
		x0, x4, x8, x12 = quarterRound(x0, x4, x8, x12)
		x5, x9, x13, x1 = quarterRound(x5, x9, x13, x1)
		x10, x14, x2, x6 = quarterRound(x10, x14, x2, x6)
		x15, x3, x7, x11 = quarterRound(x15, x3, x7, x11)
		x0, x1, x2, x3 = quarterRound(x0, x1, x2, x3)
		x5, x6, x7, x4 = quarterRound(x5, x6, x7, x4)
		x10, x11, x8, x9 = quarterRound(x10, x11, x8, x9)
		x15, x12, x13, x14 = quarterRound(x15, x12, x13, x14)

		for i := 4; i < rounds; i += 4 {
			x0, x4, x8, x12 = quarterRound(x0, x4, x8, x12)
			x5, x9, x13, x1 = quarterRound(x5, x9, x13, x1)
			x10, x14, x2, x6 = quarterRound(x10, x14, x2, x6)
			x15, x3, x7, x11 = quarterRound(x15, x3, x7, x11)
			x0, x1, x2, x3 = quarterRound(x0, x1, x2, x3)
			x5, x6, x7, x4 = quarterRound(x5, x6, x7, x4)
			x10, x11, x8, x9 = quarterRound(x10, x11, x8, x9)
			x15, x12, x13, x14 = quarterRound(x15, x12, x13, x14)

			x0, x4, x8, x12 = quarterRound(x0, x4, x8, x12)
			x5, x9, x13, x1 = quarterRound(x5, x9, x13, x1)
			x10, x14, x2, x6 = quarterRound(x10, x14, x2, x6)
			x15, x3, x7, x11 = quarterRound(x15, x3, x7, x11)
			x0, x1, x2, x3 = quarterRound(x0, x1, x2, x3)
			x5, x6, x7, x4 = quarterRound(x5, x6, x7, x4)
			x10, x11, x8, x9 = quarterRound(x10, x11, x8, x9)
			x15, x12, x13, x14 = quarterRound(x15, x12, x13, x14)
		}

		in := (*[BlockSize]byte)(src)
		out := (*[BlockSize]byte)(dst)
		addXor2(out[0:8], in[0:8], x0+c0, x1+c1)
		addXor2(out[8:16], in[8:16], x2+c2, x3+c3)
		addXor2(out[16:24], in[16:24], x4+c4, x5+c5)
		addXor2(out[24:32], in[24:32], x6+c6, x7+c7)
		addXor2(out[32:40], in[32:40], x8+counter, x9+c9)
		addXor2(out[40:48], in[40:48], x10+c10, x11+c11)
		addXor2(out[48:56], in[48:56], x12+c12, x13+c13)
		addXor2(out[56:64], in[56:64], x14+c14, x15+c15)

		counter++
		src, dst = src[BlockSize:], dst[BlockSize:]
	}
	s[8] = counter
}

// addXor2 writes src XOR the little-endian words lo, hi (eight bytes) into
// dst.
func addXor2(dst, src []byte, lo, hi uint32) {
	binary.LittleEndian.PutUint64(dst, binary.LittleEndian.Uint64(src)^(uint64(hi)<<32|uint64(lo)))
}
