package chachacore

import (
	"encoding/binary"
	"math/bits"
)

// quarterRound is the ChaCha quarter round (RFC 8439 section 2.1). It is small
// enough to be inlined, which keeps all sixteen words in registers.
func quarterRound(a, b, c, d uint32) (uint32, uint32, uint32, uint32) {
	a += b
	d ^= a
	d = bits.RotateLeft32(d, 16)
	c += d
	b ^= c
	b = bits.RotateLeft32(b, 12)
	a += b
	d ^= a
	d = bits.RotateLeft32(d, 8)
	c += d
	b ^= c
	b = bits.RotateLeft32(b, 7)
	return a, b, c, d
}

// xorBlocksGeneric is the reference kernel: for each 64-byte block of src it
// XORs one keystream block into dst and increments s[12] modulo 2^32.
// len(dst) >= len(src) and len(src) is a multiple of BlockSize.
func xorBlocksGeneric(s *State, rounds int, dst, src []byte) {
	c0, c1, c2, c3 := s[0], s[1], s[2], s[3]
	c4, c5, c6, c7 := s[4], s[5], s[6], s[7]
	c8, c9, c10, c11 := s[8], s[9], s[10], s[11]
	c13, c14, c15 := s[13], s[14], s[15]
	counter := s[12]

	// Three of the four quarter rounds of the first column round do not
	// touch the counter word, so they are computed once per call rather than
	// once per block (the same trick as x/crypto's generic code).
	p1, p5, p9, p13 := quarterRound(c1, c5, c9, c13)
	p2, p6, p10, p14 := quarterRound(c2, c6, c10, c14)
	p3, p7, p11, p15 := quarterRound(c3, c7, c11, c15)

	for len(src) >= BlockSize && len(dst) >= BlockSize {
		x0, x4, x8, x12 := quarterRound(c0, c4, c8, counter)
		x1, x5, x9, x13 := p1, p5, p9, p13
		x2, x6, x10, x14 := p2, p6, p10, p14
		x3, x7, x11, x15 := p3, p7, p11, p15

		// The first diagonal round completes the first double round.
		x0, x5, x10, x15 = quarterRound(x0, x5, x10, x15)
		x1, x6, x11, x12 = quarterRound(x1, x6, x11, x12)
		x2, x7, x8, x13 = quarterRound(x2, x7, x8, x13)
		x3, x4, x9, x14 = quarterRound(x3, x4, x9, x14)

		for i := 2; i < rounds; i += 2 {
			x0, x4, x8, x12 = quarterRound(x0, x4, x8, x12)
			x1, x5, x9, x13 = quarterRound(x1, x5, x9, x13)
			x2, x6, x10, x14 = quarterRound(x2, x6, x10, x14)
			x3, x7, x11, x15 = quarterRound(x3, x7, x11, x15)
			x0, x5, x10, x15 = quarterRound(x0, x5, x10, x15)
			x1, x6, x11, x12 = quarterRound(x1, x6, x11, x12)
			x2, x7, x8, x13 = quarterRound(x2, x7, x8, x13)
			x3, x4, x9, x14 = quarterRound(x3, x4, x9, x14)
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
		addXor(out[32:36], in[32:36], x8, c8)
		addXor(out[36:40], in[36:40], x9, c9)
		addXor(out[40:44], in[40:44], x10, c10)
		addXor(out[44:48], in[44:48], x11, c11)
		addXor(out[48:52], in[48:52], x12, counter)
		addXor(out[52:56], in[52:56], x13, c13)
		addXor(out[56:60], in[56:60], x14, c14)
		addXor(out[60:64], in[60:64], x15, c15)

		counter++
		src, dst = src[BlockSize:], dst[BlockSize:]
	}
	s[12] = counter
}

// addXor writes (src XOR (a + b)) as one little-endian word into dst.
func addXor(dst, src []byte, a, b uint32) {
	binary.LittleEndian.PutUint32(dst, binary.LittleEndian.Uint32(src)^(a+b))
}
