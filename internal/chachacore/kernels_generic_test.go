package chachacore

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
)

// core is this package as the shared kernel checks see it.
var core = kerneltest.Core{
	Switch:      kerneltest.Switch{Kernels: Kernels, Use: UseKernel, Active: Kernel},
	Blocks:      XORKeyStreamBlocks,
	Generic:     xorBlocksGeneric,
	CounterWord: 12,
}

// TestEveryKernelMatchesGeneric holds each kernel to the generic reference
// (see kerneltest.EveryKernelMatchesGeneric): only word 12, the low
// counter word, may change.
func TestEveryKernelMatchesGeneric(t *testing.T) {
	kerneltest.EveryKernelMatchesGeneric(t, core)
}
