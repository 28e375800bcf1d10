package arx

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

// CheckConstantTime returns the mechanical half of a constant-time review
// of a generated file, for [Generate]: every conditional branch must
// follow directly one of flagSetters (the instructions a generator sets
// flags from counters and lengths with, such as DECQ and TESTQ), and no
// instruction but LEAQ, which is arithmetic, may address memory through an
// index register. Key, message and tag bytes then reach only arithmetic;
// which registers hold lengths is left to the human half of the review.
func CheckConstantTime(flagSetters ...string) func(path string) error {
	allowed := map[string]bool{}
	for _, f := range flagSetters {
		allowed[f] = true
	}
	indexed := regexp.MustCompile(`\)\(\w+\*[1248]\)`)
	return func(path string) error {
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var fn, prev string
		for _, line := range strings.Split(string(text), "\n") {
			f := strings.Fields(line)
			switch {
			case strings.HasPrefix(line, "TEXT "):
				fn = line
			case len(f) == 0 || strings.HasPrefix(f[0], "//") || strings.HasSuffix(f[0], ":"):
				continue
			case strings.HasPrefix(f[0], "J") && f[0] != "JMP":
				if !allowed[prev] {
					return fmt.Errorf("%s: %s follows %s, not a counter or length test", fn, f[0], prev)
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
}
