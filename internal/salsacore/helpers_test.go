package salsacore

import "github.com/spipe-dev/spipe/internal/testutil/kerneltest"

// core is this package as the shared kernel checks see it: activeBlocks
// dispatches whole blocks and advances only word 8, the low counter word.
var core = kerneltest.Core{
	Switch:      kerneltest.Switch{Kernels: Kernels, Use: UseKernel, Active: Kernel},
	Blocks:      activeBlocks,
	Generic:     xorBlocksGeneric,
	CounterWord: 8,
}

// counter is where XORKeyStream keeps its 64-bit block counter.
var counter = kerneltest.Counter{High: 9}

// activeBlocks is xorBlocks with the active kernel.
func activeBlocks(s *State, rounds int, dst, src []byte) {
	xorBlocks(s, rounds, dst, src, kernels.Active())
}
