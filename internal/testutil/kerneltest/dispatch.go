package kerneltest

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// DispatchPicksBest fails if a core's dispatch settled for less than the
// best path the CPU offers (BestKernel asks x/sys/cpu independently of the
// registration code), which is how a kernel that faults or is wrongly gated
// would hide. SPIPE_EXPECT_KERNEL names the path a CI job requires, so a run
// under an emulated CPU model (make test-qemu) also proves it tested the
// path it meant to.
func DispatchPicksBest(t *testing.T, sw Switch) {
	names := sw.Kernels()
	require.Equal(t, BestKernel(), sw.Active(), "kernels available: %v", names)
	if want := os.Getenv("SPIPE_EXPECT_KERNEL"); want != "" {
		require.Equal(t, want, sw.Active(), "SPIPE_EXPECT_KERNEL")
	}
	assert.Equal(t, sw.Active(), names[0], "the active kernel is the best listed")
	assert.Equal(t, "generic", names[len(names)-1])
}

// GatesCoverRequiredFeatures reads the "Requires:" line avo writes above
// each kernel in the generated assembly file asm and fails if a kernel
// uses an extension its path's CPU gate does not check (say a generator
// change starts using AVX512BW): such a kernel would fault on CPUs that
// pass the gate. allowed maps a kernel name prefix (the path: every kernel
// is named prefix + "x" + its width) to the features the path's gate
// checks, in avo's names. It also fails if fewer than min kernels are
// found.
func GatesCoverRequiredFeatures(t *testing.T, asm string, allowed map[string][]string, min int) {
	f, err := os.Open(asm)
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
		var gate []string
		for prefix, feats := range allowed {
			if strings.HasPrefix(name, prefix+"x") {
				gate = feats
			}
		}
		require.NotNil(t, gate, "kernel %s belongs to no path", name)
		for _, feat := range strings.Split(requires, ", ") {
			assert.Contains(t, gate, feat, "%s requires %s", name, feat)
		}
		requires = ""
		seen++
	}
	require.NoError(t, sc.Err())
	assert.GreaterOrEqual(t, seen, min, "kernels found in %s", asm)
}
