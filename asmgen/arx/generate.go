package arx

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/mmcloughlin/avo/build"
)

// Generate writes the generator's output files (avo's build.Generate) and
// then checks the assembly it wrote: every generator ends with it, so none
// can skip the checks. checks are further checks of the .s file (such as a
// constant-time scan). Any failure prints "name: error" and exits non-zero,
// so make generate and make check-generated fail too.
func Generate(name string, checks ...func(path string) error) {
	build.Generate()
	path := outPath()
	if path == "" {
		return
	}
	for _, check := range append([]func(string) error{checkRegisters}, checks...) {
		if err := check(path); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			os.Exit(1)
		}
	}
}

// outPath returns the -out argument (avo has parsed it already), or "" when
// the generator writes to standard output.
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

// avx512Only matches registers only AVX-512 has: X16-X31, Y16-Y31, any ZMM
// and the mask registers.
var avx512Only = regexp.MustCompile(`\b[XYZ](1[6-9]|2[0-9]|3[01])\b|\bZ[0-9]+\b|\bK[1-7]\b`)

// checkRegisters fails if a function whose "Requires:" line does not name
// AVX512 uses a register only AVX-512 has. avo hands out X16-X31/Y16-Y31
// when more than 16 vector values are live (avo issue #146), which would
// turn an AVX2 or SSSE3 kernel into EVEX code that faults on the CPUs it is
// meant for.
func checkRegisters(path string) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var fn string
	checking := false
	for _, line := range strings.Split(string(text), "\n") {
		switch {
		case strings.HasPrefix(line, "// Requires:"):
			checking = !strings.Contains(line, "AVX512")
		case strings.HasPrefix(line, "TEXT "):
			fn = line
		case checking && avx512Only.MatchString(line):
			return fmt.Errorf("%s: register beyond its ISA in %q", fn, strings.TrimSpace(line))
		}
	}
	return nil
}
