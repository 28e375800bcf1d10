package salsacore

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
	"github.com/stretchr/testify/require"
)

// TestXORKeyStreamEveryLength holds XORKeyStream, on every kernel, to the
// generic kernel run block by block on every length to 2048 bytes and
// beyond one call's bound, across the 2^32 wrap of word 8 (which carries
// into word 9) and the end of the 64-bit counter (see
// kerneltest.EveryLengthMatchesGeneric).
func TestXORKeyStreamEveryLength(t *testing.T) {
	kerneltest.EveryLengthMatchesGeneric(t, core, counter, XORKeyStream)
}

// TestXORKeyStreamCarries checks the carry into word 9 on its own, as
// numbers: a call that ends right at the wrap, one that crosses it, one
// that starts at it, one that wraps the whole 64-bit counter, and empty
// calls, which move nothing (not even at a low word of 0).
func TestXORKeyStreamCarries(t *testing.T) {
	r := testutil.Rand(t)
	for _, c := range []struct {
		start     uint64
		n         int
		wantAfter uint64
	}{
		{1<<32 - 3, 3 * BlockSize, 1 << 32},
		{1<<32 - 3, 2*BlockSize + 1, 1 << 32},
		{1<<32 - 3, 5*BlockSize + 17, 1<<32 + 3},
		{1 << 32, 17, 1<<32 + 1},
		{7<<32 - 1, BlockSize, 7 << 32},
		{1<<64 - 2, 3 * BlockSize, 1},
		{5, 0, 5},
		{1 << 32, 0, 1 << 32},
		{0, 0, 0},
	} {
		s := kerneltest.RandomState(r)
		s[8], s[9] = uint32(c.start), uint32(c.start>>32)
		want := s
		want[8], want[9] = uint32(c.wantAfter), uint32(c.wantAfter>>32)
		buf := make([]byte, c.n)
		XORKeyStream(&s, 20, buf, buf)
		require.Equal(t, want, s, "%d bytes from block %#x", c.n, c.start)
	}
}
