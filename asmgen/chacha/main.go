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
	"fmt"
	"os"
	"regexp"
	"strings"

	. "github.com/mmcloughlin/avo/build"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

const signature = "func(s *[16]uint32, rounds int, dst, src []byte)"

func main() {
	ConstraintExpr("gc,!purego")

	vertical32("chachaAVX512x32", 2)
	vertical32("chachaAVX512x16", 1)
	rows("chachaAVX512x8", arx.AVX512, 2)
	rows("chachaAVX512x4", arx.AVX512, 1)
	rows("chachaAVX512x2", arx.AVX512VL256, 1)
	rows("chachaAVX512x1", arx.AVX512VL128, 1)

	vertical16("chachaAVX2x8", arx.AVX2)
	rows("chachaAVX2x2", arx.AVX2, 1)

	vertical16("chachaSSSE3x4", arx.SSSE3)
	rows("chachaSSSE3x1", arx.SSSE3, 1)

	Generate()

	if err := checkRegisters(outPath(), "AVX512", regexp.MustCompile(`\b[XYZ](1[6-9]|2[0-9]|3[01])\b|\bZ[0-9]+\b|\bK[1-7]\b`)); err != nil {
		fmt.Fprintln(os.Stderr, "chacha:", err)
		os.Exit(1)
	}
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
// feature uses a register matching bad. avo hands out Y16-Y31 when more
// than 16 vector values are live (avo issue #146), which would turn an AVX2
// or SSSE3 kernel into AVX-512 code that faults on the CPUs it is meant for.
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
