// Command poly1305 generates the Poly1305 kernels of internal/poly1305
// (run it through `make generate`):
//
//	go run ./poly1305 -out ../internal/poly1305/poly1305_amd64.s \
//	    -stubs ../internal/poly1305/poly1305_stubs_amd64.go -pkg poly1305
//
// Every kernel absorbs whole 16-byte message blocks (each with the 2^128
// bit set) into the accumulator h, kept between calls in radix 2^64 as
// h[0] + h[1]·2^64 + h[2]·2^128, partially reduced: h[2] <= 5 on entry and
// on return. Only lengths steer branches and addresses; key and message
// bytes go through arithmetic alone, so the kernels run in constant time.
package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	. "github.com/mmcloughlin/avo/build"
)

func main() {
	ConstraintExpr("gc,!purego")

	scalar()
	avx2()
	ifma(2)

	Generate()

	if err := checkRegisters(outPath(), "AVX512", regexp16()); err != nil {
		fmt.Fprintln(os.Stderr, "poly1305:", err)
		os.Exit(1)
	}
	if err := checkConstantTime(outPath()); err != nil {
		fmt.Fprintln(os.Stderr, "poly1305:", err)
		os.Exit(1)
	}
}

// regexp16 matches registers only AVX-512 has: X16-X31, Y16-Y31, ZMM and
// mask registers.
func regexp16() *regexp.Regexp {
	return regexp.MustCompile(`\b[XY](1[6-9]|2[0-9]|3[01])\b|\bZ[0-9]+\b|\bK[1-7]\b`)
}

// outPath returns the -out argument (avo has parsed it already).
func outPath() string {
	for i, a := range os.Args {
		if (a == "-out" || a == "--out") && i+1 < len(os.Args) {
			return os.Args[i+1]
		}
		if v, ok := strings.CutPrefix(a, "-out="); ok {
			return v
		}
	}
	return ""
}

// checkRegisters fails if a function whose "Requires:" line does not name
// feature uses a register matching bad: avo hands out X16-X31/Y16-Y31 when
// more than 16 vector values are live (avo issue #146), which would turn
// the AVX2 kernel into AVX-512 code that faults on AVX2-only CPUs.
func checkRegisters(path, feature string, bad *regexp.Regexp) error {
	if path == "" {
		return nil
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var fn string
	checking := false
	for _, line := range strings.Split(string(text), "\n") {
		switch {
		case strings.HasPrefix(line, "// Requires:"):
			checking = !strings.Contains(line, feature)
		case strings.HasPrefix(line, "TEXT "):
			fn = line
		case checking && bad.MatchString(line):
			return fmt.Errorf("%s: register beyond its ISA in %q", fn, strings.TrimSpace(line))
		}
	}
	return nil
}

// checkConstantTime is the mechanical half of the constant-time review:
// every conditional branch must test the block counter, right after the
// DECQ or TESTQ that sets the flags from it, and no instruction may address
// memory through an index register (only LEAQ, as arithmetic, may use the
// scaled-index form). Key, message and tag then reach only arithmetic.
func checkConstantTime(path string) error {
	if path == "" {
		return nil
	}
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
