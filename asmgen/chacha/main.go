// Command chacha generates the ChaCha assembly kernels of
// internal/chachacore (run it through `make generate`):
//
//	go run ./chacha -out ../internal/chachacore/chacha_amd64.s \
//	    -stubs ../internal/chachacore/chacha_stubs_amd64.go -pkg chachacore
//
// Every kernel has the signature of chachacore's block function,
// func(s *[16]uint32, rounds int, dst, src []byte): it XORs len(src)/64 key
// stream blocks into dst (some kernels require a multiple of their width;
// their doc comments say so), and adds the number of blocks to s[12] modulo
// 2^32, touching no other word of s. rounds is 8, 12 or 20 (the kernels
// take any even count from 4 up). Kernels are //go:noescape: they keep no
// pointer, so callers' buffers can stay on the stack.
package main

import (
	. "github.com/mmcloughlin/avo/build"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

func main() {
	ConstraintExpr("gc,!purego")

	vertical32("chachaAVX512x32", 2)
	vertical32("chachaAVX512x16", 1)
	vertical32Head("chachaAVX512x16h", 1, true)
	rows("chachaAVX512x8", arx.AVX512, 2)
	rows("chachaAVX512x4", arx.AVX512, 1)
	rows("chachaAVX512x2", arx.AVX512VL256, 1)
	rows("chachaAVX512x1", arx.AVX512VL128, 1)

	vertical16("chachaAVX2x8", arx.AVX2)
	rows("chachaAVX2x2", arx.AVX2, 1)

	vertical16("chachaSSSE3x4", arx.SSSE3)
	rows("chachaSSSE3x1", arx.SSSE3, 1)

	arx.Generate("chacha")
}
