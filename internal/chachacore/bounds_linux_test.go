//go:build linux

package chachacore

import (
	"syscall"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/stretchr/testify/require"
)

// guarded returns n bytes that end exactly where an inaccessible page
// begins, so any access past them faults.
func guarded(t *testing.T, n int) []byte {
	page := syscall.Getpagesize()
	size := (n+page-1)/page*page + page
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Munmap(mem) })
	require.NoError(t, syscall.Mprotect(mem[size-page:], syscall.PROT_NONE))
	return mem[size-page-n : size-page]
}

// TestKernelsStayInBounds puts source and destination right before unmapped
// pages: a kernel that reads past src or writes past dst[:len(src)] (say a
// full vector group stored for a partial one) crashes the test.
func TestKernelsStayInBounds(t *testing.T) {
	r := testutil.Rand(t)
	const maxBlocks = 40
	forEachKernel(t, func(t *testing.T) {
		for _, rounds := range roundCounts {
			for n := 1; n <= maxBlocks; n++ {
				s := randomState(r)
				src := guarded(t, n*BlockSize)
				copy(src, testutil.Bytes(r, len(src)))
				dst := guarded(t, n*BlockSize)
				want := make([]byte, len(src))
				ref := s
				xorBlocksGeneric(&ref, rounds, want, src)
				XORKeyStreamBlocks(&s, rounds, dst, src)
				require.Equal(t, want, dst, "rounds %d, %d blocks", rounds, n)
			}
		}
	})
}
