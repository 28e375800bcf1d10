package chachacore

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDispatchPicksBestKernel fails if dispatch settled for less than the
// best path the CPU offers (bestKernel asks x/sys/cpu independently of the
// registration code), which is how a kernel that faults or is wrongly gated
// would hide. SPIPE_EXPECT_KERNEL names the path a CI job requires, so a run
// under an emulated CPU model also proves it tested the path it meant to.
func TestDispatchPicksBestKernel(t *testing.T) {
	require.Equal(t, bestKernel(), Kernel(), "kernels available: %v", Kernels())
	if want := os.Getenv("SPIPE_EXPECT_KERNEL"); want != "" {
		require.Equal(t, want, Kernel(), "SPIPE_EXPECT_KERNEL")
	}
}
