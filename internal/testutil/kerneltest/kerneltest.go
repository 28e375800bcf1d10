// Package kerneltest holds the checks the ChaCha and Salsa20 cores share
// for their block kernels: running a test once per kernel, holding every
// kernel (through the dispatcher, and each generated function directly)
// and every length of a core's any-length function to the generic one,
// buffers that end at a guard page, and the dispatch and CPU-gate checks.
// A core's tests pass in its own functions through [Core], so the package
// knows neither core. It is imported only by _test.go files.
package kerneltest

import (
	"math/rand/v2"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/stretchr/testify/require"
)

// BlockSize is the block size of both cores, in bytes.
const BlockSize = 64

// BlocksFunc is a core's whole-block dispatcher or one of its kernels (it
// XORs len(src)/64 blocks of key stream from state s into dst and advances
// the low counter word modulo 2^32), or a core's any-length XORKeyStream.
type BlocksFunc func(s *[16]uint32, rounds int, dst, src []byte)

// Switch is how a test moves a process between the kernels of a core:
// Kernels lists the ones this CPU runs (best first, "generic" last), Use
// switches to one and returns the function that switches back, and Active
// names the kernel in use as the code under test reports it (the core's
// Kernel, or a public package's).
type Switch struct {
	Kernels func() []string
	Use     func(name string) (restore func(), err error)
	Active  func() string
}

// ForEach runs f in a subtest per kernel, with that kernel switched on, so
// every test that uses it covers every code path (kernels added later are
// picked up untouched). It requires "generic" to be listed, last. The
// subtests are not parallel: the switch is process-global.
func ForEach(t *testing.T, sw Switch, f func(t *testing.T)) {
	t.Helper()
	names := sw.Kernels()
	require.NotEmpty(t, names)
	require.Equal(t, "generic", names[len(names)-1], "generic must always be available, last")
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			restore, err := sw.Use(name)
			require.NoError(t, err)
			defer restore()
			require.Equal(t, name, sw.Active())
			f(t)
		})
	}
}

// Core is what the kernel checks need of a core: its kernel switch, its
// whole-block dispatcher (xorBlocks), its generic reference, and the index
// of the low counter word, the only word a call of either may change.
type Core struct {
	Switch      Switch
	Blocks      BlocksFunc
	Generic     BlocksFunc
	CounterWord int
}

// ForEachKernel runs f once per kernel of the core (see [ForEach]).
func (c Core) ForEachKernel(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	ForEach(t, c.Switch, f)
}

// EveryKernelMatchesGeneric holds each kernel to the generic reference on
// random states (so every key, nonce and constant word matters), every
// round count, block counts around the SIMD widths, and counters just
// below 2^32 so the low word wraps inside a call. Only the counter word
// may change, and it must advance by the block count modulo 2^32; in
// place must give the same bytes.
func EveryKernelMatchesGeneric(t *testing.T, c Core) {
	r := testutil.Rand(t)
	counts := []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100}
	ctr := c.CounterWord
	c.ForEachKernel(t, func(t *testing.T) {
		for _, rounds := range []int{8, 12, 20} {
			for _, n := range counts {
				s := RandomState(r)
				if r.IntN(2) == 0 {
					s[ctr] = -uint32(r.IntN(2*n + 1)) // wrap within the call
				}
				src := testutil.Bytes(r, n*BlockSize)
				want := make([]byte, len(src))
				ref := s
				c.Generic(&ref, rounds, want, src)

				got := make([]byte, len(src))
				st := s
				c.Blocks(&st, rounds, got, src)
				require.Equal(t, want, got, "rounds %d, %d blocks, counter %#x", rounds, n, s[ctr])
				wantState := s
				wantState[ctr] += uint32(n)
				require.Equal(t, wantState, st, "state after %d blocks", n)

				inPlace := make([]byte, len(src))
				copy(inPlace, src)
				st = s
				c.Blocks(&st, rounds, inPlace, inPlace)
				require.Equal(t, want, inPlace, "in place, rounds %d, %d blocks", rounds, n)
			}
		}
	})
}

// RandomState returns a state with every word random: constants, key and
// nonce all take part in a comparison.
func RandomState(r *rand.Rand) [16]uint32 {
	var s [16]uint32
	for i := range s {
		s[i] = r.Uint32()
	}
	return s
}
