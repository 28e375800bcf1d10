package arx

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCheckRegisters(t *testing.T) {
	for name, c := range map[string]struct {
		text string
		ok   bool
	}{
		"Y17 in AVX2":   {"// Requires: AVX, AVX2\nTEXT ·f(SB), NOSPLIT, $0-8\n\tVPADDD Y1, Y17, Y2\n\tRET\n", false},
		"X16 in SSSE3":  {"// Requires: SSSE3\nTEXT ·f(SB), NOSPLIT, $0-8\n\tPADDL X16, X1\n\tRET\n", false},
		"K1 in AVX2":    {"// Requires: AVX2\nTEXT ·f(SB), NOSPLIT, $0-8\n\tKMOVW K1, AX\n\tRET\n", false},
		"Y15 in AVX2":   {"// Requires: AVX, AVX2\nTEXT ·f(SB), NOSPLIT, $0-8\n\tVPADDD Y1, Y15, Y2\n\tRET\n", true},
		"Z20 in AVX512": {"// Requires: AVX512F\nTEXT ·f(SB), NOSPLIT, $0-8\n\tVPADDD Z1, Z20, Z2\n\tRET\n", true},
	} {
		path := filepath.Join(t.TempDir(), "k.s")
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := checkRegisters(path); (err == nil) != c.ok {
			t.Errorf("%s: checkRegisters = %v, want ok=%v", name, err, c.ok)
		}
	}
}
