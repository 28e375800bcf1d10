// Package salsacore holds the Salsa20 keystream core shared by pkg/salsa20,
// pkg/aead and the protocol: the state layout, the generic reference block
// function, the bare Salsa20 core, HSalsa20, and the dispatch to the fastest
// kernel this CPU runs.
//
// Everything above this package generates keystream through exactly one
// function, [XORKeyStream], which takes any length, splits the assembly
// calls so that each stays short and carries the 64-bit counter; a SIMD
// kernel replaces what it calls and nothing else. Buffering of partial
// blocks for later calls, counter-overflow policy and overlap checks stay
// with the callers.
package salsacore

import (
	"encoding/binary"

	"github.com/spipe-dev/spipe/internal/impl"
)

// BlockSize is the size in bytes of one Salsa20 keystream block.
const BlockSize = 64

// The Salsa20 constants: "expand 32-byte k" (sigma) for 256-bit keys and
// "expand 16-byte k" (tau) for 128-bit keys, as little-endian words.
const (
	sigma0, sigma1, sigma2, sigma3 = 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574
	tau0, tau1, tau2, tau3         = 0x61707865, 0x3120646e, 0x79622d36, 0x6b206574
)

// State is the 16-word Salsa20 input block: constants in words 0, 5, 10 and
// 15, the key in 1-4 and 11-14, the nonce in 6-7, and the 64-bit block
// counter in 8 (low) and 9 (high).
type State = [16]uint32

// Init fills s for key (16 or 32 bytes) and an 8-byte nonce with a zero
// block counter. The caller has checked the lengths; any other length panics.
func Init(s *State, key, nonce []byte) {
	switch len(key) {
	case 32:
		s[0], s[5], s[10], s[15] = sigma0, sigma1, sigma2, sigma3
		for i := range 4 {
			s[1+i] = binary.LittleEndian.Uint32(key[4*i:])
			s[11+i] = binary.LittleEndian.Uint32(key[16+4*i:])
		}
	case 16:
		s[0], s[5], s[10], s[15] = tau0, tau1, tau2, tau3
		for i := range 4 {
			s[1+i] = binary.LittleEndian.Uint32(key[4*i:])
			s[11+i] = s[1+i]
		}
	default:
		panic("salsacore: key must be 16 or 32 bytes")
	}
	if len(nonce) != 8 {
		panic("salsacore: nonce must be 8 bytes")
	}
	s[6] = binary.LittleEndian.Uint32(nonce[0:])
	s[7] = binary.LittleEndian.Uint32(nonce[4:])
	s[8], s[9] = 0, 0
}

// HSalsa derives the 32-byte XSalsa subkey from a 32-byte key and the first
// 16 bytes of a 24-byte nonce ("Extending the Salsa20 nonce", section 2).
// rounds is 20 for HSalsa20; the reduced-round XSalsa variants use their own.
func HSalsa(out *[32]byte, key *[32]byte, nonce *[16]byte, rounds int) {
	var x State
	x[0], x[5], x[10], x[15] = sigma0, sigma1, sigma2, sigma3
	for i := range 4 {
		x[1+i] = binary.LittleEndian.Uint32(key[4*i:])
		x[11+i] = binary.LittleEndian.Uint32(key[16+4*i:])
		x[6+i] = binary.LittleEndian.Uint32(nonce[4*i:])
	}
	if id := kernels.Active(); id != impl.Generic {
		// The block function is x + permute(x): the kernel computes it in
		// about half the time of the generic permute, and subtracting x
		// leaves the words HSalsa takes. (The kernel moves only the copy's
		// counter word 8, which is nonce here.)
		var b [BlockSize]byte
		s := x
		xorBlocks(&s, rounds, b[:], b[:], id)
		for i, w := range hsalsaWords {
			binary.LittleEndian.PutUint32(out[4*i:], binary.LittleEndian.Uint32(b[4*w:])-x[w])
		}
		return
	}
	permute(&x, rounds)
	for i, w := range hsalsaWords {
		binary.LittleEndian.PutUint32(out[4*i:], x[w])
	}
}

// hsalsaWords are the words of the permuted state HSalsa outputs, in order:
// the diagonal (where the constants were) and the middle row (nonce and
// counter).
var hsalsaWords = [8]int{0, 5, 10, 15, 6, 7, 8, 9}

// Core computes the Salsa20 core (the "Salsa20 hash" of the specification):
// rounds rounds over the 64-byte input block followed by the feed-forward
// addition of the input. rounds is 8, 12 or 20.
func Core(out, in *[64]byte, rounds int) {
	var x, c State
	for i := range c {
		c[i] = binary.LittleEndian.Uint32(in[4*i:])
	}
	x = c
	permute(&x, rounds)
	for i := range x {
		binary.LittleEndian.PutUint32(out[4*i:], x[i]+c[i])
	}
}

// permute applies rounds Salsa20 rounds (column round, then row round) to x
// in place, without the feed-forward addition.
func permute(x *State, rounds int) {
	x0, x1, x2, x3 := x[0], x[1], x[2], x[3]
	x4, x5, x6, x7 := x[4], x[5], x[6], x[7]
	x8, x9, x10, x11 := x[8], x[9], x[10], x[11]
	x12, x13, x14, x15 := x[12], x[13], x[14], x[15]
	for i := 0; i < rounds; i += 2 {
		x0, x4, x8, x12 = quarterRound(x0, x4, x8, x12)
		x5, x9, x13, x1 = quarterRound(x5, x9, x13, x1)
		x10, x14, x2, x6 = quarterRound(x10, x14, x2, x6)
		x15, x3, x7, x11 = quarterRound(x15, x3, x7, x11)
		x0, x1, x2, x3 = quarterRound(x0, x1, x2, x3)
		x5, x6, x7, x4 = quarterRound(x5, x6, x7, x4)
		x10, x11, x8, x9 = quarterRound(x10, x11, x8, x9)
		x15, x12, x13, x14 = quarterRound(x15, x12, x13, x14)
	}
	*x = State{x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15}
}
