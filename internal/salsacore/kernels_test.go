package salsacore

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
	"github.com/stretchr/testify/assert"
)

// TestEveryKernelMatchesGeneric holds each kernel, through the dispatcher,
// to the generic reference (see kerneltest.EveryKernelMatchesGeneric): only
// word 8, the low counter word, may change.
func TestEveryKernelMatchesGeneric(t *testing.T) {
	kerneltest.EveryKernelMatchesGeneric(t, core)
}

// TestKernelsAllocateNothing holds every path to zero allocations per call:
// the kernels run on caller memory, and the precomputed first round stays
// on the stack.
func TestKernelsAllocateNothing(t *testing.T) {
	buf := make([]byte, 100<<10)
	var s State
	core.ForEachKernel(t, func(t *testing.T) {
		for _, n := range []int{1, BlockSize, 100, 4 * BlockSize, 1024, 5000, 64 << 10, len(buf)} {
			allocs := testing.AllocsPerRun(20, func() { XORKeyStream(&s, 20, buf[:n], buf[:n]) })
			assert.Zero(t, allocs, "%d bytes", n)
		}
	})
}
