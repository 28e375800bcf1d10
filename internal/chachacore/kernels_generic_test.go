package chachacore

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/stretchr/testify/require"
)

// forEachKernel runs f once per implementation this CPU supports, with
// XORKeyStreamBlocks switched to it, so every vector test covers every path
// (kernels added later are picked up without touching the tests). It does
// not run the subtests in parallel: the switch is package-global.
func forEachKernel(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	names := Kernels()
	require.NotEmpty(t, names)
	require.Equal(t, "generic", names[len(names)-1], "generic must always be available, last")
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			restore, err := UseKernel(name)
			require.NoError(t, err)
			defer restore()
			require.Equal(t, name, Kernel())
			f(t)
		})
	}
}

// TestEveryKernelMatchesGeneric holds each kernel to the generic reference
// on random states (so every key, nonce and constant word matters), every
// round count, block counts around the SIMD widths, and counters just
// below 2^32 so the low word wraps inside a call. Only word 12 may change,
// and it must advance by the block count modulo 2^32.
func TestEveryKernelMatchesGeneric(t *testing.T) {
	r := testutil.Rand(t)
	counts := []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100}
	forEachKernel(t, func(t *testing.T) {
		for _, rounds := range []int{8, 12, 20} {
			for _, n := range counts {
				var s State
				for i := range s {
					s[i] = r.Uint32()
				}
				if r.IntN(2) == 0 {
					s[12] = -uint32(r.IntN(2*n + 1)) // wrap within the call
				}
				src := testutil.Bytes(r, n*BlockSize)
				want := make([]byte, len(src))
				ref := s
				xorBlocksGeneric(&ref, rounds, want, src)

				got := make([]byte, len(src))
				st := s
				XORKeyStreamBlocks(&st, rounds, got, src)
				require.Equal(t, want, got, "rounds %d, %d blocks, counter %#x", rounds, n, s[12])
				wantState := s
				wantState[12] += uint32(n)
				require.Equal(t, wantState, st, "state after %d blocks", n)

				inPlace := make([]byte, len(src))
				copy(inPlace, src)
				st = s
				XORKeyStreamBlocks(&st, rounds, inPlace, inPlace)
				require.Equal(t, want, inPlace, "in place, rounds %d, %d blocks", rounds, n)
			}
		}
	})
}
