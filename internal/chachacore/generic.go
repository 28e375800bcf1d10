package chachacore

import (
	"encoding/binary"
	"math/bits"
)

// quarterRound is the ChaCha quarter round (RFC 8439 section 2.1).
func quarterRound(a, b, c, d uint32) (uint32, uint32, uint32, uint32) {
	return quarterRoundRest(a+b, b, c, d)
}

// quarterRoundRest is the quarter round after its first step: a already
// holds a+b. It is small enough to be inlined, which keeps the words in
// registers.
//
// The kernel calls it with that addition written at the call site: the
// compiler marks every inlined call for tracebacks and hangs the mark on an
// instruction from the call's own line, or emits a NOP when there is none.
// With the addition there, the eight NOPs a double round would otherwise
// carry (about 7% of its instructions) disappear.
func quarterRoundRest(a, b, c, d uint32) (uint32, uint32, uint32, uint32) {
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
// len(dst) >= len(src) and len(src) is a multiple of BlockSize; rounds is a
// multiple of 4 of at least 8 (8, 12 or 20).
//
// It is shaped for the Go compiler, whose output is near the limit of scalar
// code (four ALU ports, rotates on two of them, and sixteen state words for
// thirteen registers), so every instruction outside the rounds counts:
//   - three of the first column round's quarter rounds are computed once per
//     call (they do not read the counter);
//   - the quarter rounds are called through quarterRoundRest, which leaves
//     no inlining NOPs (see there);
//   - the double rounds run two per loop iteration, after the peeled first
//     and a second one, which halves the loop's counter updates and the
//     register shuffling at the back edge;
//   - the output is XORed eight bytes at a time through fixed-size array
//     pointers, which removes the bounds checks and halves the loads and
//     stores.
//
// It works on one block at a time on purpose. Interleaving two blocks hides
// the quarter rounds' latency and was ~6% faster on an idle core, but it
// spills most of the 32 live words and was ~20% slower when the sibling
// hyperthread was busy; full unrolling of the rounds did not help either.
func xorBlocksGeneric(s *State, rounds int, dst, src []byte) {
	c0, c1, c2, c3 := s[0], s[1], s[2], s[3]
	c4, c5, c6, c7 := s[4], s[5], s[6], s[7]
	c8, c9, c10, c11 := s[8], s[9], s[10], s[11]
	c13, c14, c15 := s[13], s[14], s[15]
	counter := s[12]

	p1, p5, p9, p13 := quarterRoundRest(c1+c5, c5, c9, c13)
	p2, p6, p10, p14 := quarterRoundRest(c2+c6, c6, c10, c14)
	p3, p7, p11, p15 := quarterRoundRest(c3+c7, c7, c11, c15)

	for len(src) >= BlockSize && len(dst) >= BlockSize {
		// Rounds 1 and 2: the column round's counter quarter round, then the
		// diagonal round.
		x0, x4, x8, x12 := quarterRoundRest(c0+c4, c4, c8, counter)
		x1, x5, x9, x13 := p1, p5, p9, p13
		x2, x6, x10, x14 := p2, p6, p10, p14
		x3, x7, x11, x15 := p3, p7, p11, p15
		x0, x5, x10, x15 = quarterRoundRest(x0+x5, x5, x10, x15)
		x1, x6, x11, x12 = quarterRoundRest(x1+x6, x6, x11, x12)
		x2, x7, x8, x13 = quarterRoundRest(x2+x7, x7, x8, x13)
		x3, x4, x9, x14 = quarterRoundRest(x3+x4, x4, x9, x14)

		// Rounds 3 and 4, so that the rest comes in groups of four.
		x0, x4, x8, x12 = quarterRoundRest(x0+x4, x4, x8, x12)
		x1, x5, x9, x13 = quarterRoundRest(x1+x5, x5, x9, x13)
		x2, x6, x10, x14 = quarterRoundRest(x2+x6, x6, x10, x14)
		x3, x7, x11, x15 = quarterRoundRest(x3+x7, x7, x11, x15)
		x0, x5, x10, x15 = quarterRoundRest(x0+x5, x5, x10, x15)
		x1, x6, x11, x12 = quarterRoundRest(x1+x6, x6, x11, x12)
		x2, x7, x8, x13 = quarterRoundRest(x2+x7, x7, x8, x13)
		x3, x4, x9, x14 = quarterRoundRest(x3+x4, x4, x9, x14)

		for i := 4; i < rounds; i += 4 {
			x0, x4, x8, x12 = quarterRoundRest(x0+x4, x4, x8, x12)
			x1, x5, x9, x13 = quarterRoundRest(x1+x5, x5, x9, x13)
			x2, x6, x10, x14 = quarterRoundRest(x2+x6, x6, x10, x14)
			x3, x7, x11, x15 = quarterRoundRest(x3+x7, x7, x11, x15)
			x0, x5, x10, x15 = quarterRoundRest(x0+x5, x5, x10, x15)
			x1, x6, x11, x12 = quarterRoundRest(x1+x6, x6, x11, x12)
			x2, x7, x8, x13 = quarterRoundRest(x2+x7, x7, x8, x13)
			x3, x4, x9, x14 = quarterRoundRest(x3+x4, x4, x9, x14)

			x0, x4, x8, x12 = quarterRoundRest(x0+x4, x4, x8, x12)
			x1, x5, x9, x13 = quarterRoundRest(x1+x5, x5, x9, x13)
			x2, x6, x10, x14 = quarterRoundRest(x2+x6, x6, x10, x14)
			x3, x7, x11, x15 = quarterRoundRest(x3+x7, x7, x11, x15)
			x0, x5, x10, x15 = quarterRoundRest(x0+x5, x5, x10, x15)
			x1, x6, x11, x12 = quarterRoundRest(x1+x6, x6, x11, x12)
			x2, x7, x8, x13 = quarterRoundRest(x2+x7, x7, x8, x13)
			x3, x4, x9, x14 = quarterRoundRest(x3+x4, x4, x9, x14)
		}

		in := (*[BlockSize]byte)(src)
		out := (*[BlockSize]byte)(dst)
		addXor2(out[0:8], in[0:8], x0+c0, x1+c1)
		addXor2(out[8:16], in[8:16], x2+c2, x3+c3)
		addXor2(out[16:24], in[16:24], x4+c4, x5+c5)
		addXor2(out[24:32], in[24:32], x6+c6, x7+c7)
		addXor2(out[32:40], in[32:40], x8+c8, x9+c9)
		addXor2(out[40:48], in[40:48], x10+c10, x11+c11)
		addXor2(out[48:56], in[48:56], x12+counter, x13+c13)
		addXor2(out[56:64], in[56:64], x14+c14, x15+c15)

		counter++
		src, dst = src[BlockSize:], dst[BlockSize:]
	}
	s[12] = counter
}

// addXor2 writes src XOR the little-endian words lo, hi (eight bytes) into
// dst.
func addXor2(dst, src []byte, lo, hi uint32) {
	binary.LittleEndian.PutUint64(dst, binary.LittleEndian.Uint64(src)^(uint64(hi)<<32|uint64(lo)))
}
