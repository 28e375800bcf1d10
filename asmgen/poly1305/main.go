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
	"fmt"
	"os"
	"regexp"
	"strings"

	. "github.com/mmcloughlin/avo/build"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

func main() {
	ConstraintExpr("gc,!purego")

	scalar()
	avx2()
	ifma()

	arx.Generate("poly1305", checkConstantTime)
}

// checkConstantTime is the mechanical half of the constant-time review:
// every conditional branch must test a counter (or a flag made from
// lengths and addresses), right after the DECQ or TESTQ that sets the
// flags from it, and no instruction may address
// memory through an index register (only LEAQ, as arithmetic, may use the
// scaled-index form). Key, message and tag then reach only arithmetic.
func checkConstantTime(path string) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	indexed := regexp.MustCompile(`\)\(\w+\*[1248]\)`)
	var fn, prev string
	for _, line := range strings.Split(string(text), "\n") {
		f := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "TEXT "):
			fn = line
		case len(f) == 0 || strings.HasPrefix(f[0], "//") || strings.HasSuffix(f[0], ":"):
			continue
		case strings.HasPrefix(f[0], "J") && f[0] != "JMP":
			if prev != "DECQ" && prev != "TESTQ" {
				return fmt.Errorf("%s: %s follows %s, not the counter update", fn, f[0], prev)
			}
		case indexed.MatchString(line) && f[0] != "LEAQ":
			return fmt.Errorf("%s: indexed memory access in %q", fn, strings.TrimSpace(line))
		}
		if len(f) > 0 {
			prev = f[0]
		}
	}
	return nil
}
