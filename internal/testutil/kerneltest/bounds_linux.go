//go:build linux

package kerneltest

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/stretchr/testify/require"
)

// StayInBounds puts source and destination right before unmapped pages and
// runs every kernel of c through the dispatcher on 1 to 40 blocks, then
// every supported function of fns directly on the counts it takes: a
// kernel that reads past src or writes past dst[:len(src)] (say a whole
// vector group stored for a partial one) crashes the test.
func StayInBounds(t *testing.T, c Core, fns []Function) {
	r := testutil.Rand(t)
	check := func(t *testing.T, fn BlocksFunc, blocks int) {
		n := blocks * BlockSize
		src := BeforeGuardPage(t, n)
		copy(src, testutil.Bytes(r, n))
		dst := BeforeGuardPage(t, n)
		for _, rounds := range []int{8, 12, 20} {
			s := RandomState(r)
			want := make([]byte, n)
			ref := s
			c.Generic(&ref, rounds, want, src)
			fn(&s, rounds, dst, src)
			require.Equal(t, want, dst, "rounds %d, %d blocks", rounds, blocks)
		}
	}
	c.ForEachKernel(t, func(t *testing.T) {
		for blocks := 1; blocks <= 40; blocks++ {
			check(t, c.Blocks, blocks)
		}
	})
	for _, f := range fns {
		if !f.Supported {
			continue
		}
		t.Run(f.Name, func(t *testing.T) {
			for _, blocks := range functionCounts(f) {
				check(t, f.Fn, blocks)
			}
		})
	}
}
