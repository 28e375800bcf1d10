package pool

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFindingAPoolAllocatesNothing: tier switches look pools up per frame
// in some streams, so the lookup must not allocate (as boxing a length
// for a map key would), and each length has one pool.
func TestFindingAPoolAllocatesNothing(t *testing.T) {
	sizes := []int{98323, 1081363, 1048595, 12345}
	for _, n := range sizes {
		poolOf(n)
	}
	for _, n := range sizes {
		assert.Zero(t, testing.AllocsPerRun(100, func() { poolOf(n) }), "size %d", n)
		assert.Same(t, poolOf(n), poolOf(n))
	}
	assert.NotSame(t, poolOf(sizes[0]), poolOf(sizes[1]))
}

// TestGetGivesTheLengthAsked: a buffer comes back at the length asked
// for, whatever was put back into other pools.
func TestGetGivesTheLengthAsked(t *testing.T) {
	for _, n := range []int{1, 4096, 65555, 1 << 20} {
		b := Get(n)
		require.Len(t, *b, n)
		Put(b)
		Put(Get(n + 1))
		assert.Len(t, *Get(n), n)
	}
}
