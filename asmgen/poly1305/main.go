// Command poly1305 generates the Poly1305 kernels of internal/poly1305
// (run it through `make generate`):
//
//	go run ./poly1305 -out ../internal/poly1305/poly1305_amd64.s \
//	    -stubs ../internal/poly1305/poly1305_stubs_amd64.go -pkg poly1305
//
// Every kernel absorbs whole 16-byte message blocks (each with the 2^128
// bit set) into the accumulator h, kept between calls in radix 2^64 as
// h[0] + h[1]·2^64 + h[2]·2^128, partially reduced: h[2] <= 5 on entry and
// on return. Only lengths steer branches and addresses (and, in the IFMA
// kernel, whether the message starts near a page boundary: an address);
// key and message bytes go through arithmetic alone, so the kernels run in
// constant time.
package main

import (
	. "github.com/mmcloughlin/avo/build"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

func main() {
	ConstraintExpr("gc,!purego")

	scalar()
	avx2()
	ifmaKernel()

	// Every conditional branch tests a counter right after the DECQ or
	// TESTQ that sets the flags from it (or a flag made from lengths and
	// addresses).
	arx.Generate("poly1305", arx.CheckConstantTime("DECQ", "TESTQ"))
}
