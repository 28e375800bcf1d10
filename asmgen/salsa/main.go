// Command salsa generates the Salsa20 kernels of internal/salsacore (run it
// through `make generate`):
//
//	go run ./salsa -out ../internal/salsacore/salsa_amd64.s \
//	    -stubs ../internal/salsacore/salsa_stubs_amd64.go -pkg salsacore
//
// Every kernel has the signature of the ChaCha kernels,
// func(s *[16]uint32, rounds int, dst, src []byte), the vertical ones with
// a last parameter pre *[17]uint32 (see firstDoubleRound): it XORs
// len(src)/64 key stream blocks into dst (one kernel requires a multiple
// of its width; its doc comment says so) and adds the number of blocks to
// s[8] modulo 2^32, touching no other word of s: the Go caller splits its
// calls where s[8] wraps and carries into s[9]. rounds is 8, 12 or 20 (the
// kernels take any even count from 4 up). Kernels are //go:noescape: they
// keep no pointer, so callers' buffers and pre can stay on the stack.
//
// Two layouts:
//   - vertical (vertical16.go, vertical32.go): register i holds word i of
//     N blocks, so a quarter round is plain lane-wise arithmetic and the
//     state is transposed once before the XOR. Used for long inputs; on
//     AVX-512 two such states run interleaved.
//   - diagonal (diagonal.go): one block per 128-bit lane in the diagonal
//     layout of the Salsa20 paper's SIMD form, for inputs shorter than a
//     vertical group, in one group of vectors or two interleaved.
//
// Rotations are VPROLD on AVX-512 and shift/xor/shift/xor into the
// destination elsewhere (step.go). The arguments, frame, transposes,
// joins, loads, stores and tables come from asmgen/arx, shared with the
// ChaCha generator.
package main

import (
	. "github.com/mmcloughlin/avo/build"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

func main() {
	ConstraintExpr("gc,!purego")

	vertical32("salsaAVX512x32", 2)
	vertical32("salsaAVX512x16", 1)
	diagonals("salsaAVX512x8", arx.AVX512, 2)
	diagonals("salsaAVX512x4", arx.AVX512, 1)
	diagonals("salsaAVX512x1", arx.AVX512VL128, 1)

	vertical16("salsaAVX2x8", arx.AVX2)
	diagonals("salsaAVX2x4", arx.AVX2, 2)
	diagonals("salsaAVX2x2", arx.AVX2, 1)

	vertical16("salsaSSSE3x4", arx.SSSE3)
	diagonals("salsaSSSE3x1", arx.SSSE3, 1)

	arx.Generate("salsa")
}
