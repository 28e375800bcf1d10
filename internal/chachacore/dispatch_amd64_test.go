//go:build gc && !purego

package chachacore

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/cpu"
)

// bestKernel is the path dispatch must pick on this CPU.
func bestKernel() string {
	x := cpu.X86
	switch {
	case x.HasAVX512F && x.HasAVX512VL && x.HasAVX2:
		return "avx512"
	case x.HasAVX && x.HasAVX2:
		return "avx2"
	case x.HasSSSE3:
		return "ssse3"
	}
	return "generic"
}

// allowedFeatures is what each path's gate in xor_amd64.go checks, in the
// names of avo's "Requires:" lines.
var allowedFeatures = map[string][]string{
	"chachaAVX512": {"AVX", "AVX2", "AVX512F", "AVX512VL"},
	"chachaAVX2":   {"AVX", "AVX2"},
	"chachaSSSE3":  {"SSE2", "SSSE3"},
}

// TestGatesCoverRequiredFeatures reads the "Requires:" line avo writes above
// each kernel in chacha_amd64.s and fails if a kernel uses an extension its
// path's CPU gate does not check (say a generator change starts using
// AVX512BW): such a kernel would fault on CPUs that pass the gate.
func TestGatesCoverRequiredFeatures(t *testing.T) {
	f, err := os.Open("chacha_amd64.s")
	require.NoError(t, err)
	defer f.Close()
	var requires string
	seen := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if r, ok := strings.CutPrefix(line, "// Requires: "); ok {
			requires = r
			continue
		}
		name, ok := strings.CutPrefix(line, "TEXT ·")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, "(")
		var allowed []string
		for prefix, feats := range allowedFeatures {
			if strings.HasPrefix(name, prefix+"x") {
				allowed = feats
			}
		}
		require.NotNil(t, allowed, "kernel %s belongs to no path", name)
		for _, feat := range strings.Split(requires, ", ") {
			assert.Contains(t, allowed, feat, "%s requires %s", name, feat)
		}
		requires = ""
		seen++
	}
	require.NoError(t, sc.Err())
	assert.GreaterOrEqual(t, seen, 10, "kernels found in chacha_amd64.s")
}
