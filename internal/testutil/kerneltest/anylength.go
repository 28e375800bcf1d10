package kerneltest

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/stretchr/testify/require"
)

// Counter says where a core's any-length function keeps the block
// counter: the low word is the core's CounterWord, High the word the low
// one carries into, or -1 for a 32-bit counter that wraps.
type Counter struct{ High int }

// set writes the counter of s as one number.
func (c Counter) set(core Core, s *[16]uint32, n uint64) {
	s[core.CounterWord] = uint32(n)
	if c.High >= 0 {
		s[c.High] = uint32(n >> 32)
	}
}

// reference returns n bytes of key stream from block start of s, made by
// the generic kernel one block at a time with the counter set for each
// block: no splitting, carrying or tail handling of the code under test.
func (c Counter) reference(core Core, s [16]uint32, rounds int, start uint64, n int) []byte {
	blocks := (n + BlockSize - 1) / BlockSize
	out := make([]byte, blocks*BlockSize)
	for b := range blocks {
		c.set(core, &s, start+uint64(b))
		core.Generic(&s, rounds, out[b*BlockSize:(b+1)*BlockSize], out[b*BlockSize:(b+1)*BlockSize])
	}
	return out[:n]
}

// EveryLengthMatchesGeneric holds a core's any-length key stream function
// xor (XORKeyStream), on every kernel and round count, to the generic
// kernel run block by block: every length from 0 to 2048 bytes and lengths
// past the bound on one assembly call, from counters anywhere, just below
// the wrap of the low word (so it wraps inside a call, or right at its
// end) and, for a 64-bit counter, just below 2^64; from unaligned buffers,
// out of place and in place. Afterwards the counter must have advanced by
// the blocks used, ceil(len/64), carried into the high word or wrapping
// at 2^32 as the counter says, and no other word of the state may have
// changed. A dst shorter than src must panic before anything is written.
func EveryLengthMatchesGeneric(t *testing.T, core Core, ctr Counter, xor BlocksFunc) {
	r := testutil.Rand(t)
	limit := uint64(1) << 32
	if ctr.High >= 0 {
		limit = 0 // 2^64
	}
	// Every length up to 2048 from the first two counters, a spread from
	// the others; the long ones (not under -short, which qemu runs) cross
	// the 64 KiB bound on an assembly call and, from 2^32-33, the wrap.
	starts := []uint64{uint64(r.Uint32()), 1<<32 - 3, 1<<32 - 33, limit - 2}
	var dense, sparse []int
	for n := 0; n <= 2048; n++ {
		dense = append(dense, n)
		if n%64 <= 1 || n%64 == 63 {
			sparse = append(sparse, n)
		}
	}
	var long []int
	if !testing.Short() {
		for _, n := range []int{64 << 10, 200 << 10} {
			long = append(long, n-1, n, n+BlockSize+5)
		}
	}
	refLen := 2048
	if len(long) > 0 {
		refLen = long[len(long)-1]
	}
	core.ForEachKernel(t, func(t *testing.T) {
		for _, rounds := range []int{8, 12, 20} {
			s := RandomState(r)
			for i, start := range starts {
				want := ctr.reference(core, s, rounds, start, refLen)
				src := testutil.Bytes(r, len(want)+3)[3:]
				for i := range want {
					want[i] ^= src[i]
				}
				backing := make([]byte, len(want)+2)
				// check compares whole buffers first (the race detector
				// makes a loop over bytes slow) and looks closer on failure.
				check := func(n int) {
					st := s
					ctr.set(core, &st, start)
					clear(backing)
					dst := backing[1 : n+1]
					xor(&st, rounds, dst, src[:n])
					if !bytes.Equal(dst, want[:n]) {
						require.Equal(t, want[:n], dst, "rounds %d, counter %#x, %d bytes", rounds, start, n)
					}
					require.Zero(t, backing[0], "write before dst")
					require.Zero(t, backing[n+1], "write past dst")
					end := s
					ctr.set(core, &end, start+uint64((n+BlockSize-1)/BlockSize))
					if st != end {
						require.Equal(t, end, st, "state after %d bytes from counter %#x", n, start)
					}
				}
				lengths := sparse
				if i < 2 {
					lengths = dense
				}
				for _, n := range append(lengths, long...) {
					check(n)
				}

				// In place, a length with a partial last block.
				n := 1000 + r.IntN(1000)
				buf := append([]byte(nil), src[:n]...)
				st := s
				ctr.set(core, &st, start)
				xor(&st, rounds, buf, buf)
				require.Equal(t, want[:n], buf, "in place, rounds %d, counter %#x, %d bytes", rounds, start, n)
			}
		}
		dst := make([]byte, 3*BlockSize)
		st := s0(core)
		require.Panics(t, func() { xor(&st, 20, dst[:2*BlockSize+1], make([]byte, 2*BlockSize+2)) }, "short dst")
		require.Equal(t, make([]byte, 3*BlockSize), dst, "nothing written before the panic")
		require.Equal(t, s0(core), st, "state untouched by the panic")
	})
}

// s0 is a fixed state for the misuse checks.
func s0(core Core) [16]uint32 {
	var s [16]uint32
	for i := range s {
		s[i] = uint32(i) * 0x01010101
	}
	s[core.CounterWord] = 5
	return s
}

// MatchesGenericOnce is the body of a core's fuzz target over its
// any-length function xor: from a random state (from seed) with the
// counter at start, n bytes through every kernel, src and dst misaligned
// by srcOff and dstOff or dst aliasing src, must match the generic kernel
// run block by block, and leave the counter advanced as
// EveryLengthMatchesGeneric says.
func MatchesGenericOnce(t *testing.T, core Core, ctr Counter, xor BlocksFunc, seed uint64, rounds int, start uint64, n, srcOff, dstOff int, inPlace bool) {
	r := rand.New(rand.NewPCG(seed, seed))
	s := RandomState(r)
	src := testutil.Bytes(r, n+srcOff)[srcOff:]
	want := ctr.reference(core, s, rounds, start, n)
	for i := range want {
		want[i] ^= src[i]
	}
	end := s
	ctr.set(core, &end, start+uint64((n+BlockSize-1)/BlockSize))
	for _, name := range core.Switch.Kernels() {
		restore, err := core.Switch.Use(name)
		require.NoError(t, err)
		st := s
		ctr.set(core, &st, start)
		var dst []byte
		if inPlace {
			dst = append(make([]byte, 0, n), src...)
			xor(&st, rounds, dst, dst)
		} else {
			dst = make([]byte, n+dstOff)[dstOff:]
			xor(&st, rounds, dst, src)
		}
		restore()
		require.Equal(t, want, dst, "kernel %s, rounds %d, %d bytes from counter %#x", name, rounds, n, start)
		require.Equal(t, end, st, "kernel %s: state", name)
	}
}
