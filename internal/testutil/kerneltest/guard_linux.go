//go:build linux

package kerneltest

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// BeforeGuardPage returns n bytes that end exactly where an inaccessible
// page begins, so a kernel that reads or writes past them faults instead
// of passing quietly. The mapping is released when the test ends.
func BeforeGuardPage(t *testing.T, n int) []byte {
	t.Helper()
	page := syscall.Getpagesize()
	size := (n+page-1)/page*page + page
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Munmap(mem) })
	require.NoError(t, syscall.Mprotect(mem[size-page:], syscall.PROT_NONE))
	return mem[size-page-n : size-page]
}
