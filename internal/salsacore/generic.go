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
// len(dst) >= len(src) and len(src) is a multiple of BlockSize.
func xorBlocksGeneric(s *State, rounds int, dst, src []byte) {
	c0, c1, c2, c3 := s[0], s[1], s[2], s[3]
	c4, c5, c6, c7 := s[4], s[5], s[6], s[7]
	c9, c10, c11 := s[9], s[10], s[11]
	c12, c13, c14, c15 := s[12], s[13], s[14], s[15]
	counter := s[8]

	// Of the first column round only the quarter round on (x0, x4, x8, x12)
	// reads the low counter word; the other three are computed once per call.
	p5, p9, p13, p1 := quarterRound(c5, c9, c13, c1)
	p10, p14, p2, p6 := quarterRound(c10, c14, c2, c6)
	p15, p3, p7, p11 := quarterRound(c15, c3, c7, c11)

	for len(src) >= BlockSize && len(dst) >= BlockSize {
		x0, x4, x8, x12 := quarterRound(c0, c4, counter, c12)
		x5, x9, x13, x1 := p5, p9, p13, p1
		x10, x14, x2, x6 := p10, p14, p2, p6
		x15, x3, x7, x11 := p15, p3, p7, p11

		// The first row round completes the first double round.
		x0, x1, x2, x3 = quarterRound(x0, x1, x2, x3)
		x5, x6, x7, x4 = quarterRound(x5, x6, x7, x4)
		x10, x11, x8, x9 = quarterRound(x10, x11, x8, x9)
		x15, x12, x13, x14 = quarterRound(x15, x12, x13, x14)

		for i := 2; i < rounds; i += 2 {
			x0, x4, x8, x12 = quarterRound(x0, x4, x8, x12)
			x5, x9, x13, x1 = quarterRound(x5, x9, x13, x1)
			x10, x14, x2, x6 = quarterRound(x10, x14, x2, x6)
			x15, x3, x7, x11 = quarterRound(x15, x3, x7, x11)
			x0, x1, x2, x3 = quarterRound(x0, x1, x2, x3)
			x5, x6, x7, x4 = quarterRound(x5, x6, x7, x4)
			x10, x11, x8, x9 = quarterRound(x10, x11, x8, x9)
			x15, x12, x13, x14 = quarterRound(x15, x12, x13, x14)
		}

		in := src[:BlockSize:BlockSize]
		out := dst[:BlockSize:BlockSize]
		addXor(out[0:4], in[0:4], x0, c0)
		addXor(out[4:8], in[4:8], x1, c1)
		addXor(out[8:12], in[8:12], x2, c2)
		addXor(out[12:16], in[12:16], x3, c3)
		addXor(out[16:20], in[16:20], x4, c4)
		addXor(out[20:24], in[20:24], x5, c5)
		addXor(out[24:28], in[24:28], x6, c6)
		addXor(out[28:32], in[28:32], x7, c7)
		addXor(out[32:36], in[32:36], x8, counter)
		addXor(out[36:40], in[36:40], x9, c9)
		addXor(out[40:44], in[40:44], x10, c10)
		addXor(out[44:48], in[44:48], x11, c11)
		addXor(out[48:52], in[48:52], x12, c12)
		addXor(out[52:56], in[52:56], x13, c13)
		addXor(out[56:60], in[56:60], x14, c14)
		addXor(out[60:64], in[60:64], x15, c15)

		counter++
		src, dst = src[BlockSize:], dst[BlockSize:]
	}
	s[8] = counter
}

// addXor writes (src XOR (a + b)) as one little-endian word into dst.
func addXor(dst, src []byte, a, b uint32) {
	binary.LittleEndian.PutUint32(dst, binary.LittleEndian.Uint32(src)^(a+b))
}
