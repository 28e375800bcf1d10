package arx

import (
	"os"
	"path/filepath"
	"testing"
)

func writeTemp(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "k.s")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheckConstantTime(t *testing.T) {
	checkConstantTime := CheckConstantTime("DECQ", "TESTQ")
	good := "TEXT ·f(SB), NOSPLIT, $0-8\nloop:\n\tADDQ (BX), DI\n\tLEAQ (R9)(R9*4), R9\n\tDECQ SI\n\tJNZ  loop\n\tRET\n"
	if err := checkConstantTime(writeTemp(t, good)); err != nil {
		t.Errorf("counter loop rejected: %v", err)
	}
	for name, bad := range map[string]string{
		"data branch":  "TEXT ·f(SB), NOSPLIT, $0-8\n\tCMPQ DI, $3\n\tJLT  out\nout:\n\tRET\n",
		"indexed load": "TEXT ·f(SB), NOSPLIT, $0-8\n\tMOVQ (BX)(DI*8), AX\n\tRET\n",
	} {
		if err := checkConstantTime(writeTemp(t, bad)); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}
