// Command salsa generates the Salsa20 SIMD kernels of internal/salsacore.
//
// Every kernel has the shape
//
//	func(s *[16]uint32, rounds int, dst, src *byte, blocks int)
//
// (the vertical ones also take pre *[17]uint32 after s, see genVertical). It XORs
// blocks 64-byte key stream blocks into dst, starting at the block counter
// in s[8], and stores s[8]+blocks (mod 2^32) back. It never touches
// s[9]: the Go caller splits calls where s[8] wraps. blocks may be any
// positive count (a multiple of 32 for xorVertical32AVX512); a kernel
// reads and writes whole blocks only, never past dst[:64*blocks] or
// src[:64*blocks].
//
// Two layouts:
//   - vertical (vertical.go): register i holds word i of N blocks, so a
//     quarter round is plain lane-wise arithmetic and the state is
//     transposed once before the XOR. Used for long inputs; on AVX-512 two
//     such states run interleaved (vertical32.go).
//   - horizontal (horizontal.go): one block per 128-bit lane in the
//     diagonal layout of the Salsa20 paper's SIMD form, for inputs shorter
//     than a vertical batch; also two such groups interleaved
//     (horizontal8.go).
//
// Rotations are VPROLD on AVX-512 and shift/xor/shift/xor into the
// destination elsewhere (Salsa20 rotates by 7, 9, 13 and 18, so byte
// shuffles never apply). The shared add/xor/rotate, transpose and load/store
// helpers come from asmgen/arx.
//
// Run it from asmgen/ (see the Makefile's generate target):
//
//	go run ./salsa -out ../internal/salsacore/salsa_amd64.s -stubs ../internal/salsacore/salsa_stubs_amd64.go -pkg salsacore
package main

import (
	. "github.com/mmcloughlin/avo/build"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

func main() {
	ConstraintExpr("gc,!purego") // old comma syntax; avo writes gc && !purego

	genVertical(sse)
	genVertical(avx2)
	genVertical(avx512)
	genVertical32()

	genHorizontal(sse, 1)
	genHorizontal(avx2, 2)
	genHorizontalPair(avx2)
	genHorizontal(avx512, 1)
	genHorizontal(avx512, 4)
	genHorizontalPair(avx512)

	arx.Generate("salsa")
}
