package poly1305

import (
	"encoding/binary"
	"math/bits"
)

// p = 2^130 - 5. Numbers mod p are kept in radix 2^64 as h[0] + h[1]·2^64 +
// h[2]·2^128, only partially reduced: h < 2^130 + 2^128 between blocks
// (h[2] <= 4; the kernels return h[2] <= 5), so after adding a block
// h[2] < 8 and h[2]·r[0] fits in 64 bits (r[0] < 2^60 after clamping).

// state is the running authenticator: the accumulator and the key.
type state struct {
	h [3]uint64
	r [2]uint64 // clamped r
	s [2]uint64
}

// Clamping clears the top four bits of bytes 3, 7, 11, 15 and the low two
// bits of bytes 4, 8, 12 (RFC 8439 section 2.5).
const (
	rMask0 = 0x0ffffffc0fffffff
	rMask1 = 0x0ffffffc0ffffffc
)

func (st *state) init(key *[KeySize]byte) {
	st.h = [3]uint64{}
	st.r[0] = binary.LittleEndian.Uint64(key[0:8]) & rMask0
	st.r[1] = binary.LittleEndian.Uint64(key[8:16]) & rMask1
	st.s[0] = binary.LittleEndian.Uint64(key[16:24])
	st.s[1] = binary.LittleEndian.Uint64(key[24:32])
}

// block absorbs one 16-byte block: h = (h + m + hibit·2^128)·r mod p, with
// hibit 1 for full message blocks and 0 for the padded last block.
func (st *state) block(m *[blockSize]byte, hibit uint64) { absorb(st, m[:], hibit) }

// blocksGeneric absorbs whole 16-byte blocks of msg, each with the 2^128
// bit set. It is the reference every kernel is tested against.
func blocksGeneric(st *state, msg []byte) { absorb(st, msg, 1) }

// absorb runs h = (h + block + hibit·2^128)·r mod p (partially reduced,
// below 2^130 + 2^128) over the whole blocks of msg. The accumulator lives
// in locals for the loop; h < 2^131 after the addition, so h2 < 8 and
// h2·r0, h2·r1 fit in 64 bits (r0, r1 < 2^60 after clamping).
func absorb(st *state, msg []byte, hibit uint64) {
	h0, h1, h2 := st.h[0], st.h[1], st.h[2]
	r0, r1 := st.r[0], st.r[1]
	for len(msg) >= blockSize {
		var c uint64
		h0, c = bits.Add64(h0, binary.LittleEndian.Uint64(msg[0:8]), 0)
		h1, c = bits.Add64(h1, binary.LittleEndian.Uint64(msg[8:16]), c)
		h2 += c + hibit

		// The product t0 + t1·2^64 + t2·2^128 + t3·2^192, column by column.
		hi00, t0 := bits.Mul64(h0, r0)
		hi01, lo01 := bits.Mul64(h0, r1)
		hi10, lo10 := bits.Mul64(h1, r0)
		hi11, lo11 := bits.Mul64(h1, r1)
		lo20 := h2 * r0
		lo21 := h2 * r1

		var c2 uint64
		t1, c := bits.Add64(hi00, lo01, 0)
		t2, c2 := bits.Add64(hi01, lo11, c)
		t3 := hi11 + c2 // no overflow: the product is below 2^255
		t1, c = bits.Add64(t1, lo10, 0)
		t2, c2 = bits.Add64(t2, hi10, c)
		t3 += c2
		t2, c = bits.Add64(t2, lo20, 0)
		t3 += lo21 + c

		// Everything from bit 130 up is worth 5 times as much at bit 0:
		// with cc = (t2 &^ 3) + t3·2^64 = 4·(product >> 130), add cc and
		// cc/4.
		h0, h1, h2 = t0, t1, t2&3
		c0, c1 := t2&^3, t3
		h0, c = bits.Add64(h0, c0, 0)
		h1, c = bits.Add64(h1, c1, c)
		h2 += c
		c0 = c0>>2 | c1<<62
		c1 >>= 2
		h0, c = bits.Add64(h0, c0, 0)
		h1, c = bits.Add64(h1, c1, c)
		h2 += c

		msg = msg[blockSize:]
	}
	st.h = [3]uint64{h0, h1, h2}
}

// reduce returns h mod p for any h < 2^134 (h2 < 16), in constant time.
// It takes and returns words rather than an array so that they stay in
// registers.
func reduce(h0, h1, h2 uint64) (uint64, uint64, uint64) {
	// Fold bits 130 and up (times 5) into the bottom: h < 2^130 + 15.
	var c uint64
	top := h2 >> 2
	h2 &= 3
	h0, c = bits.Add64(h0, top*5, 0)
	h1, c = bits.Add64(h1, 0, c)
	h2 += c
	// Now h < 2p: subtract p once if h + 5 reaches 2^130.
	t0, c := bits.Add64(h0, 5, 0)
	t1, c := bits.Add64(h1, 0, c)
	t2 := h2 + c
	mask := -(t2 >> 2) // all ones iff h >= p (t2 <= 4)
	h0 ^= (h0 ^ t0) & mask
	h1 ^= (h1 ^ t1) & mask
	h2 ^= (h2 ^ t2&3) & mask
	return h0, h1, h2
}

// finish writes (h mod p + s) mod 2^128 to out.
func (st *state) finish(out *[TagSize]byte) {
	h0, h1, _ := reduce(st.h[0], st.h[1], st.h[2])
	var c uint64
	h0, c = bits.Add64(h0, st.s[0], 0)
	h1, _ = bits.Add64(h1, st.s[1], c)
	binary.LittleEndian.PutUint64(out[0:8], h0)
	binary.LittleEndian.PutUint64(out[8:16], h1)
}
