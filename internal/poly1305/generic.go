package poly1305

import (
	"encoding/binary"
	"math/bits"
)

// p = 2^130 - 5. Numbers mod p are kept in radix 2^64 as h[0] + h[1]·2^64 +
// h[2]·2^128, only partially reduced: h < 2^130 + 2^128 between blocks, so
// h[2] <= 4 and h[2]·r[0] fits in 64 bits (r[0] < 2^60 after clamping).

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
func (st *state) block(m *[blockSize]byte, hibit uint64) {
	var c uint64
	h0, h1, h2 := st.h[0], st.h[1], st.h[2]
	h0, c = bits.Add64(h0, binary.LittleEndian.Uint64(m[0:8]), 0)
	h1, c = bits.Add64(h1, binary.LittleEndian.Uint64(m[8:16]), c)
	h2 += c + hibit
	st.h = mulMod([3]uint64{h0, h1, h2}, st.r)
}

// blocksGeneric absorbs whole 16-byte blocks of msg, each with the 2^128
// bit set. It is the reference every kernel is tested against.
func blocksGeneric(st *state, msg []byte) {
	for len(msg) >= blockSize {
		st.block((*[blockSize]byte)(msg), 1)
		msg = msg[blockSize:]
	}
}

// mulMod returns h·r partially reduced mod p (below 2^130 + 2^128), for
// h < 2^131 with h[2] < 16 and a clamped r (r[0], r[1] < 2^60).
func mulMod(h [3]uint64, r [2]uint64) [3]uint64 {
	// The product t0 + t1·2^64 + t2·2^128 + t3·2^192 as 128-bit columns.
	hi00, lo00 := bits.Mul64(h[0], r[0])
	hi01, lo01 := bits.Mul64(h[0], r[1])
	hi10, lo10 := bits.Mul64(h[1], r[0])
	hi11, lo11 := bits.Mul64(h[1], r[1])
	lo20 := h[2] * r[0] // < 2^64: h[2] < 16, r[0] < 2^60
	lo21 := h[2] * r[1]

	var c, c2 uint64
	t0 := lo00
	t1, c := bits.Add64(hi00, lo01, 0)
	t2, c2 := bits.Add64(hi01, lo11, c)
	t3 := hi11 + c2 // no overflow: the product is below 2^255
	t1, c = bits.Add64(t1, lo10, 0)
	t2, c2 = bits.Add64(t2, hi10, c)
	t3 += c2
	t2, c = bits.Add64(t2, lo20, 0)
	t3, _ = bits.Add64(t3, lo21, c)

	// Everything from bit 130 up is worth 5 times as much at bit 0:
	// with c = (t2 &^ 3) + t3·2^64 = 4·(product >> 130), add c and c/4.
	h0, h1, h2 := t0, t1, t2&3
	c0, c1 := t2&^3, t3
	h0, c = bits.Add64(h0, c0, 0)
	h1, c = bits.Add64(h1, c1, c)
	h2 += c
	c0 = c0>>2 | c1<<62
	c1 >>= 2
	h0, c = bits.Add64(h0, c0, 0)
	h1, c = bits.Add64(h1, c1, c)
	h2 += c
	return [3]uint64{h0, h1, h2}
}

// reduce returns h mod p for any h < 2^134 (h[2] < 16), in constant time.
func reduce(h [3]uint64) [3]uint64 {
	// Fold bits 130 and up (times 5) into the bottom: h < 2^130 + 15.
	var c uint64
	top := h[2] >> 2
	h[2] &= 3
	h[0], c = bits.Add64(h[0], top*5, 0)
	h[1], c = bits.Add64(h[1], 0, c)
	h[2] += c
	// Now h < 2p: subtract p once if h + 5 reaches 2^130.
	t0, c := bits.Add64(h[0], 5, 0)
	t1, c := bits.Add64(h[1], 0, c)
	t2 := h[2] + c
	mask := -(t2 >> 2) // all ones iff h >= p (t2 <= 4)
	h[0] ^= (h[0] ^ t0) & mask
	h[1] ^= (h[1] ^ t1) & mask
	h[2] ^= (h[2] ^ t2&3) & mask
	return h
}

// finish writes (h mod p + s) mod 2^128 to out.
func (st *state) finish(out *[TagSize]byte) {
	h := reduce(st.h)
	var c uint64
	h[0], c = bits.Add64(h[0], st.s[0], 0)
	h[1], _ = bits.Add64(h[1], st.s[1], c)
	binary.LittleEndian.PutUint64(out[0:8], h[0])
	binary.LittleEndian.PutUint64(out[8:16], h[1])
}
