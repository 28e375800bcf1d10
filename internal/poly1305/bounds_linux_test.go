//go:build linux

package poly1305

import (
	"syscall"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/stretchr/testify/require"
)

// fenced returns n bytes between two inaccessible pages, starting right
// after the first: a message taken from its front or its back then has an
// inaccessible page right before or right after it.
func fenced(t *testing.T, n int) []byte {
	page := syscall.Getpagesize()
	body := (n + page - 1) / page * page
	mem, err := syscall.Mmap(-1, 0, body+2*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Munmap(mem) })
	require.NoError(t, syscall.Mprotect(mem[:page], syscall.PROT_NONE))
	require.NoError(t, syscall.Mprotect(mem[page+body:], syscall.PROT_NONE))
	return mem[page : page+body]
}

// TestKernelsStayInBounds puts messages right after and right before an
// inaccessible page: the IFMA kernel addresses its first, padded group
// before the message and must mask those loads off, and no kernel may read
// past the end. Every length up to 2 KiB + 15 (so every padding of the
// first group), on every kernel.
func TestKernelsStayInBounds(t *testing.T) {
	r := testutil.Rand(t)
	key := randomKey(r)
	const maxLen = 2048 + 15
	region := fenced(t, 2*maxLen)
	copy(region, testutil.Bytes(r, len(region)))
	forEachKernel(t, func(t *testing.T) {
		for n := 0; n <= maxLen; n++ {
			for side, msg := range [][]byte{region[:n], region[len(region)-n:]} {
				want := xcryptoSum(key, msg)
				var got [TagSize]byte
				Sum(&got, msg, key)
				require.Equal(t, want, got, "%d bytes, side %d", n, side)
			}
		}
	})
}
