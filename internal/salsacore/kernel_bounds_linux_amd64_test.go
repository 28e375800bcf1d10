//go:build gc && !purego

package salsacore

import (
	"fmt"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
	"github.com/stretchr/testify/require"
)

// TestRawKernelsStayInBounds runs every generated function with src and dst
// each ending at an unmapped page, on every block count it takes up to 40
// (and three 32-block batches): a kernel that reads past src or writes past
// dst, say a whole vector batch for a partial one, crashes the test.
func TestRawKernelsStayInBounds(t *testing.T) {
	for _, k := range rawKernels() {
		if !k.supported {
			continue
		}
		t.Run(k.name, func(t *testing.T) {
			for blocks := k.multiple; blocks <= max(40, 3*k.multiple); blocks += k.multiple {
				n := blocks * BlockSize
				src := kerneltest.BeforeGuardPage(t, n)
				copy(src, randomBytes(n, uint64(blocks)))
				dst := kerneltest.BeforeGuardPage(t, n)
				for _, rounds := range []int{8, 12, 20} {
					s := testState(uint64(blocks))
					want := make([]byte, n)
					ref := s
					xorBlocksGeneric(&ref, rounds, want, src)
					k.fn(&s, rounds, &dst[0], &src[0], blocks)
					require.Equal(t, want, dst, fmt.Sprintf("rounds %d, %d blocks", rounds, blocks))
				}
			}
		})
	}
}
