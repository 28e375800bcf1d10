package chachacore

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
	"github.com/stretchr/testify/require"
)

// TestXORKeyStreamEveryLength holds XORKeyStream, on every kernel, to the
// generic kernel run block by block on every length to 2048 bytes (so a
// partial last block joins every possible number of full blocks) and
// beyond one call's bound, with the 32-bit counter wrapping inside a call
// and at its end (see kerneltest.EveryLengthMatchesGeneric).
func TestXORKeyStreamEveryLength(t *testing.T) {
	kerneltest.EveryLengthMatchesGeneric(t, core, counter32, XORKeyStream)
}

// TestXORKeyStream64EveryLength is TestXORKeyStreamEveryLength for
// XORKeyStream64, whose counter carries from word 12 into word 13 and
// wraps at 2^64.
func TestXORKeyStream64EveryLength(t *testing.T) {
	kerneltest.EveryLengthMatchesGeneric(t, core, counter64, XORKeyStream64)
}

// TestXORKeyStreamHead holds XORKeyStreamHead, on every kernel and round
// count, to the generic reference run as two steps (the head block, then
// the message): every block count from 0 to 40, some with a partial last
// block, and a few long ones, with the counter anywhere including just
// below the 2^32 wrap (so the head, or any message block, can be the one
// that wraps), and unaligned source and destination.
func TestXORKeyStreamHead(t *testing.T) {
	r := testutil.Rand(t)
	var lengths []int
	for n := 0; n <= 40; n++ {
		lengths = append(lengths, n*BlockSize)
	}
	lengths = append(lengths, 1, 63, 9*BlockSize-1, 9*BlockSize+1, 16*BlockSize+5, 17*BlockSize-1, 63*BlockSize, 64*BlockSize, 65*BlockSize+33, 100*BlockSize, 1024*BlockSize+7)
	starts := []uint32{0, 1, 1 << 31, ^uint32(0), ^uint32(0) - 1, ^uint32(0) - 7, ^uint32(0) - 15, ^uint32(0) - 16}
	core.ForEachKernel(t, func(t *testing.T) {
		for _, rounds := range roundCounts {
			for _, n := range lengths {
				for _, start := range append(starts, r.Uint32()) {
					s := kerneltest.RandomState(r)
					s[12] = start
					src := testutil.Bytes(r, n+3)[3:]
					ref := s
					var wantHead [BlockSize]byte
					xorBlocksGeneric(&ref, rounds, wantHead[:], wantHead[:])
					full := (n + BlockSize - 1) &^ (BlockSize - 1)
					want := make([]byte, full)
					copy(want, src)
					xorBlocksGeneric(&ref, rounds, want, want)

					var head [BlockSize]byte
					for i := range head {
						head[i] = 0x5a // the head is written, not XORed into
					}
					got := make([]byte, n+5)[5:]
					XORKeyStreamHead(&s, rounds, &head, got, src)
					require.Equal(t, wantHead, head, "rounds %d, %d bytes, counter %#x: head", rounds, n, start)
					require.Equal(t, want[:n], got, "rounds %d, %d bytes, counter %#x", rounds, n, start)
					require.Equal(t, ref, s, "rounds %d, %d bytes, counter %#x: state after the call", rounds, n, start)
				}
			}
		}
	})
}
