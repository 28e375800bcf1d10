//go:build linux

package chachacore

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
	"github.com/stretchr/testify/require"
)

// TestKernelsStayInBounds puts source and destination right before unmapped
// pages: a kernel that reads past src or writes past dst[:len(src)] (say a
// full vector group stored for a partial one) crashes the test.
func TestKernelsStayInBounds(t *testing.T) {
	r := testutil.Rand(t)
	const maxBlocks = 40
	core.ForEachKernel(t, func(t *testing.T) {
		for _, rounds := range roundCounts {
			for n := 1; n <= maxBlocks; n++ {
				s := kerneltest.RandomState(r)
				src := kerneltest.BeforeGuardPage(t, n*BlockSize)
				copy(src, testutil.Bytes(r, len(src)))
				dst := kerneltest.BeforeGuardPage(t, n*BlockSize)
				want := make([]byte, len(src))
				ref := s
				xorBlocksGeneric(&ref, rounds, want, src)
				XORKeyStreamBlocks(&s, rounds, dst, src)
				require.Equal(t, want, dst, "rounds %d, %d blocks", rounds, n)
			}
		}
	})
}
