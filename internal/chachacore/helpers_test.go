package chachacore

import "github.com/spipe-dev/spipe/internal/testutil/kerneltest"

var roundCounts = []int{8, 12, 20}

// core is this package as the shared kernel checks see it: activeBlocks
// dispatches whole blocks and advances only word 12, the low counter word.
var core = kerneltest.Core{
	Switch:      kerneltest.Switch{Kernels: Kernels, Use: UseKernel, Active: Kernel},
	Blocks:      activeBlocks,
	Generic:     xorBlocksGeneric,
	CounterWord: 12,
}

// Where XORKeyStream keeps its block counter (32 bits, RFC 8439), and
// where XORKeyStream64 does (64 bits, the original layout).
var (
	counter32 = kerneltest.Counter{High: -1}
	counter64 = kerneltest.Counter{High: 13}
)

// activeBlocks is xorBlocks with the active kernel.
func activeBlocks(s *State, rounds int, dst, src []byte) {
	xorBlocks(s, rounds, dst, src, kernels.Active())
}
