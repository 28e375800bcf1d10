package salsacore

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
)

// TestDispatchPicksBestKernel fails if dispatch fell back to a lesser path
// than the CPU offers, or than SPIPE_EXPECT_KERNEL names under qemu (see
// kerneltest.DispatchPicksBest).
func TestDispatchPicksBestKernel(t *testing.T) {
	kerneltest.DispatchPicksBest(t, core.Switch)
}
