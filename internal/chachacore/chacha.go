// Package chachacore holds the ChaCha keystream core shared by pkg/chacha20,
// pkg/aead and the protocol: the state layout, the generic reference block
// function, HChaCha20, and the dispatch to the fastest kernel this CPU runs.
//
// Everything above this package generates keystream through
// [XORKeyStream] (the 32-bit counter of RFC 8439) or [XORKeyStream64] (the
// original layout's 64-bit counter), which take any length, split the
// assembly calls so that each stays short and carry the counter; a SIMD
// kernel replaces what they call and nothing else. [XORKeyStreamHead]
// adds, for the AEADs, a lone block (block 0, the Poly1305 key) computed
// inside the same kernel call as the message blocks after it, and is
// otherwise the same as two calls of XORKeyStream. Buffering of partial
// blocks for later calls, counter-overflow policy and overlap checks stay
// with the callers.
package chachacore

import (
	"encoding/binary"

	"github.com/spipe-dev/spipe/internal/impl"
)

// BlockSize is the size in bytes of one ChaCha keystream block.
const BlockSize = 64

// The ChaCha constants: "expand 32-byte k" (sigma) for 256-bit keys and
// "expand 16-byte k" (tau) for 128-bit keys, as little-endian words.
const (
	sigma0, sigma1, sigma2, sigma3 = 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574
	tau0, tau1, tau2, tau3         = 0x61707865, 0x3120646e, 0x79622d36, 0x6b206574
)

// State is the 16-word ChaCha input block. Words 0-3 hold the constants,
// 4-11 the key, 12 the low counter word and 13-15 the nonce (IETF layout) or
// 13 the high counter word and 14-15 the nonce (original layout).
type State = [16]uint32

// Init fills s for key (16 or 32 bytes) and nonce (8 or 12 bytes) with a zero
// block counter. The caller has checked the lengths; any other length panics.
func Init(s *State, key, nonce []byte) {
	switch len(key) {
	case 32:
		s[0], s[1], s[2], s[3] = sigma0, sigma1, sigma2, sigma3
		for i := range 8 {
			s[4+i] = binary.LittleEndian.Uint32(key[4*i:])
		}
	case 16:
		s[0], s[1], s[2], s[3] = tau0, tau1, tau2, tau3
		for i := range 4 {
			s[4+i] = binary.LittleEndian.Uint32(key[4*i:])
			s[8+i] = s[4+i]
		}
	default:
		panic("chachacore: key must be 16 or 32 bytes")
	}
	switch len(nonce) {
	case 8:
		s[12], s[13] = 0, 0
		s[14] = binary.LittleEndian.Uint32(nonce[0:])
		s[15] = binary.LittleEndian.Uint32(nonce[4:])
	case 12:
		s[12] = 0
		s[13] = binary.LittleEndian.Uint32(nonce[0:])
		s[14] = binary.LittleEndian.Uint32(nonce[4:])
		s[15] = binary.LittleEndian.Uint32(nonce[8:])
	default:
		panic("chachacore: nonce must be 8 or 12 bytes")
	}
}

// HChaCha derives the 32-byte XChaCha subkey from a 32-byte key and the first
// 16 bytes of a 24-byte nonce (draft-irtf-cfrg-xchacha section 2.2). rounds is
// 20 for HChaCha20; the reduced-round XChaCha variants use their own count.
func HChaCha(out *[32]byte, key *[32]byte, nonce *[16]byte, rounds int) {
	var x State
	x[0], x[1], x[2], x[3] = sigma0, sigma1, sigma2, sigma3
	for i := range 8 {
		x[4+i] = binary.LittleEndian.Uint32(key[4*i:])
	}
	for i := range 4 {
		x[12+i] = binary.LittleEndian.Uint32(nonce[4*i:])
	}
	if id := kernels.Active(); id != impl.Generic {
		// The block function is x + permute(x): the kernel computes it in
		// about half the time of the generic permute, and subtracting x
		// leaves the words HChaCha takes.
		var b [BlockSize]byte
		s := x
		xorBlocks(&s, rounds, b[:], b[:], id)
		for i := range 4 {
			binary.LittleEndian.PutUint32(out[4*i:], binary.LittleEndian.Uint32(b[4*i:])-x[i])
			binary.LittleEndian.PutUint32(out[16+4*i:], binary.LittleEndian.Uint32(b[48+4*i:])-x[12+i])
		}
		return
	}
	permute(&x, rounds)
	for i := range 4 {
		binary.LittleEndian.PutUint32(out[4*i:], x[i])
		binary.LittleEndian.PutUint32(out[16+4*i:], x[12+i])
	}
}

// permute applies rounds ChaCha rounds to x in place, without the final
// feed-forward addition (that is what HChaCha20 needs).
func permute(x *State, rounds int) {
	x0, x1, x2, x3 := x[0], x[1], x[2], x[3]
	x4, x5, x6, x7 := x[4], x[5], x[6], x[7]
	x8, x9, x10, x11 := x[8], x[9], x[10], x[11]
	x12, x13, x14, x15 := x[12], x[13], x[14], x[15]
	for i := 0; i < rounds; i += 2 {
		x0, x4, x8, x12 = quarterRound(x0, x4, x8, x12)
		x1, x5, x9, x13 = quarterRound(x1, x5, x9, x13)
		x2, x6, x10, x14 = quarterRound(x2, x6, x10, x14)
		x3, x7, x11, x15 = quarterRound(x3, x7, x11, x15)
		x0, x5, x10, x15 = quarterRound(x0, x5, x10, x15)
		x1, x6, x11, x12 = quarterRound(x1, x6, x11, x12)
		x2, x7, x8, x13 = quarterRound(x2, x7, x8, x13)
		x3, x4, x9, x14 = quarterRound(x3, x4, x9, x14)
	}
	*x = State{x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15}
}
