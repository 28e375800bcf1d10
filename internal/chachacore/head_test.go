package chachacore

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
	"github.com/stretchr/testify/require"
)

// TestXORKeyStreamHead holds XORKeyStreamHead, on every kernel and round
// count, to the generic reference run as two steps (the head block, then
// the message blocks): every block count from 0 to 40 and a few long ones,
// with the counter anywhere including just below the 2^32 wrap (so the
// head, or any message block, can be the one that wraps), and unaligned
// source and destination.
func TestXORKeyStreamHead(t *testing.T) {
	r := testutil.Rand(t)
	var counts []int
	for n := 0; n <= 40; n++ {
		counts = append(counts, n)
	}
	counts = append(counts, 63, 64, 65, 100, 1024)
	starts := []uint32{0, 1, 1 << 31, ^uint32(0), ^uint32(0) - 1, ^uint32(0) - 7, ^uint32(0) - 15, ^uint32(0) - 16}
	core.ForEachKernel(t, func(t *testing.T) {
		for _, rounds := range roundCounts {
			for _, n := range counts {
				for _, start := range append(starts, r.Uint32()) {
					s := kerneltest.RandomState(r)
					s[12] = start
					src := testutil.Bytes(r, n*BlockSize+3)[3:]
					ref := s
					var wantHead [BlockSize]byte
					xorBlocksGeneric(&ref, rounds, wantHead[:], wantHead[:])
					want := make([]byte, len(src))
					xorBlocksGeneric(&ref, rounds, want, src)

					var head [BlockSize]byte
					for i := range head {
						head[i] = 0x5a // the head is written, not XORed into
					}
					got := make([]byte, len(src)+5)[5:]
					XORKeyStreamHead(&s, rounds, &head, got, src)
					require.Equal(t, wantHead, head, "rounds %d, %d blocks, counter %#x: head", rounds, n, start)
					require.Equal(t, want, got, "rounds %d, %d blocks, counter %#x", rounds, n, start)
					require.Equal(t, ref, s, "rounds %d, %d blocks, counter %#x: state after the call", rounds, n, start)
				}
			}
		}
	})
}
