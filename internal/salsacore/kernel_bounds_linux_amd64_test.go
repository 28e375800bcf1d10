//go:build gc && !purego

package salsacore

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// beforeGuardPage returns n bytes that end exactly where an inaccessible
// page begins, so any access past them faults.
func beforeGuardPage(t *testing.T, n int) []byte {
	page := syscall.Getpagesize()
	size := (n+page-1)/page*page + page
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Munmap(mem) })
	require.NoError(t, syscall.Mprotect(mem[size-page:], syscall.PROT_NONE))
	return mem[size-page-n : size-page]
}

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
				src := beforeGuardPage(t, n)
				copy(src, randomBytes(n, uint64(blocks)))
				dst := beforeGuardPage(t, n)
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
