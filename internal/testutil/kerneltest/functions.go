package kerneltest

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/stretchr/testify/require"
)

// Function is one generated kernel of a core, called directly rather than
// through the dispatcher, so that it meets every block count whatever the
// dispatcher would send it.
type Function struct {
	Name      string
	Fn        BlocksFunc
	Supported bool // this CPU runs it
	Multiple  int  // block counts must be multiples of this (1 for any)
}

// functionCounts are the block counts f is tested on: 1 to 40 (every
// vertical group size plus partial groups on both sides), or three whole
// multiples for a function that takes only those.
func functionCounts(f Function) []int {
	var counts []int
	for n := f.Multiple; n <= max(40, 3*f.Multiple); n += f.Multiple {
		counts = append(counts, n)
	}
	return counts
}

// EveryFunctionMatchesGeneric runs each supported function directly on
// every block count of functionCounts, every round count, from unaligned
// buffers with guard bytes around dst and with counters placed so that
// some runs wrap the low counter word, and holds dst and the state to the
// generic kernel; in place must give the same bytes.
func EveryFunctionMatchesGeneric(t *testing.T, c Core, fns []Function) {
	const guard = 64
	r := testutil.Rand(t)
	for _, f := range fns {
		if !f.Supported {
			continue
		}
		t.Run(f.Name, func(t *testing.T) {
			for _, rounds := range []int{8, 12, 20} {
				for _, blocks := range functionCounts(f) {
					for _, ctr := range []uint32{0, 7, 0xffffffff - 20} {
						s := RandomState(r)
						s[c.CounterWord] = ctr
						n := blocks * BlockSize
						src := testutil.Bytes(r, n+1)[1:]
						buf := make([]byte, n+2*guard+3)
						for i := range buf {
							buf[i] = 0xa5
						}
						dst := buf[guard+3 : guard+3+n]

						want := make([]byte, n)
						ws := s
						c.Generic(&ws, rounds, want, src)

						gs := s
						f.Fn(&gs, rounds, dst, src)
						require.Equal(t, want, dst, "rounds %d, %d blocks, counter %#x", rounds, blocks, ctr)
						require.Equal(t, ws, gs, "state after the call: rounds %d, %d blocks, counter %#x", rounds, blocks, ctr)
						for i, b := range buf[:guard+3] {
							require.Equal(t, byte(0xa5), b, "write before dst at %d: %d blocks", i, blocks)
						}
						for i, b := range buf[guard+3+n:] {
							require.Equal(t, byte(0xa5), b, "write past dst at +%d: %d blocks", i, blocks)
						}

						in := append([]byte(nil), src...)
						ps := s
						f.Fn(&ps, rounds, in, in)
						require.Equal(t, want, in, "in place: rounds %d, %d blocks", rounds, blocks)
					}
				}
			}
		})
	}
}
