package chachacore

import (
	"math/rand/v2"
	"testing"

	"github.com/spipe-dev/spipe/internal/keystream"
	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var roundCounts = []int{8, 12, 20}

// referenceStream is n bytes of generic key stream from block 0 of s.
func referenceStream(s State, rounds, n int) []byte {
	blocks := (n + BlockSize - 1) / BlockSize
	out := make([]byte, blocks*BlockSize)
	s[12] = 0
	xorBlocksGeneric(&s, rounds, out, out)
	return out[:n]
}

// newStream is a 32-bit-counter key stream over s driven by the active
// kernel, the way pkg/chacha20 drives it.
func newStream(s *State, rounds int) *keystream.Stream {
	var ks keystream.Stream
	ks.Init(s, XORKeyStreamBlocks, keystream.Layout{Name: "chachacore-test", Lo: 12, Hi: -1}, rounds)
	return &ks
}

func xorInto(dst, a, b []byte) {
	for i := range dst {
		dst[i] = a[i] ^ b[i]
	}
}

// TestKernelsCounterWrap starts each kernel at every counter from 2^32-40
// to 2^32-1 with block counts that span every lane of every kernel width, so
// the 32-bit counter wraps inside a vertical group, a row group and between
// two interleaved sets. The core counts modulo 2^32; the reference does too.
func TestKernelsCounterWrap(t *testing.T) {
	r := testutil.Rand(t)
	counts := []int{1, 2, 3, 4, 5, 8, 9, 16, 17, 32, 33, 48, 64, 65}
	core.ForEachKernel(t, func(t *testing.T) {
		for _, rounds := range roundCounts {
			base := kerneltest.RandomState(r)
			src := testutil.Bytes(r, 65*BlockSize)
			for back := 1; back <= 40; back++ {
				for _, n := range counts {
					s := base
					s[12] = -uint32(back)
					want := make([]byte, n*BlockSize)
					ref := s
					xorBlocksGeneric(&ref, rounds, want, src[:n*BlockSize])
					got := make([]byte, n*BlockSize)
					XORKeyStreamBlocks(&s, rounds, got, src[:n*BlockSize])
					require.Equal(t, want, got, "rounds %d, counter 2^32-%d, %d blocks", rounds, back, n)
					require.Equal(t, ref, s, "state after the call")
				}
			}
		}
	})
}

// TestKernelsLongCalls compares whole calls of up to the 64 KiB call bound,
// at sizes that exercise every combination of the 32-block, 16-block and row
// kernels, with unaligned source and destination.
func TestKernelsLongCalls(t *testing.T) {
	r := testutil.Rand(t)
	var sizes []int
	for n := 1; n <= 100; n++ {
		sizes = append(sizes, n)
	}
	sizes = append(sizes, 127, 128, 129, 255, 256, 257, 1000, 1024)
	core.ForEachKernel(t, func(t *testing.T) {
		for _, rounds := range roundCounts {
			for _, n := range sizes {
				s := kerneltest.RandomState(r)
				srcBacking := testutil.Bytes(r, n*BlockSize+3)
				src := srcBacking[3:]
				want := make([]byte, len(src))
				ref := s
				xorBlocksGeneric(&ref, rounds, want, src)
				dstBacking := make([]byte, len(src)+5)
				got := dstBacking[5:]
				XORKeyStreamBlocks(&s, rounds, got, src)
				require.Equal(t, want, got, "rounds %d, %d blocks", rounds, n)
				require.Equal(t, ref, s, "state after %d blocks", n)
			}
		}
	})
}

// TestKernelsAllocateNothing holds every path to zero allocations per call.
func TestKernelsAllocateNothing(t *testing.T) {
	buf := make([]byte, 64<<10)
	var s State
	core.ForEachKernel(t, func(t *testing.T) {
		for _, n := range []int{BlockSize, 4 * BlockSize, 8 * BlockSize, 9 * BlockSize, 1024, len(buf)} {
			allocs := testing.AllocsPerRun(20, func() {
				XORKeyStreamBlocks(&s, 20, buf[:n], buf[:n])
			})
			assert.Zero(t, allocs, "%d bytes", n)
		}
	})
}

// FuzzKernelsMatchGeneric feeds random states, lengths, offsets and round
// counts to every kernel and compares with the generic one, through the
// key stream (byte lengths, start offsets) and directly (whole blocks).
func FuzzKernelsMatchGeneric(f *testing.F) {
	f.Add(uint64(1), uint16(0), uint16(64), uint8(2), uint32(0))
	f.Add(uint64(2), uint16(17), uint16(1000), uint8(0), uint32(0xfffffff0))
	f.Add(uint64(3), uint16(63), uint16(4096), uint8(1), uint32(0xffffffff))
	f.Fuzz(func(t *testing.T, seed uint64, offset, length uint16, roundsIdx uint8, counter uint32) {
		r := rand.New(rand.NewPCG(seed, seed))
		rounds := roundCounts[int(roundsIdx)%len(roundCounts)]
		s := kerneltest.RandomState(r)
		n := int(length) % (8 << 10)
		off := int(offset) % (4 << 10)
		src := testutil.Bytes(r, n)
		ref := referenceStream(s, rounds, off+n)
		want := make([]byte, n)
		xorInto(want, src, ref[off:])

		blocks := n / BlockSize
		wantBlocks := make([]byte, blocks*BlockSize)
		bs := s
		bs[12] = counter
		refState := bs
		xorBlocksGeneric(&refState, rounds, wantBlocks, src[:blocks*BlockSize])

		for _, name := range Kernels() {
			restore, err := UseKernel(name)
			require.NoError(t, err)
			got := make([]byte, n)
			ks := newStream(&s, rounds)
			ks.Seek(uint64(off))
			ks.XORKeyStream(got, src)
			gotBlocks := make([]byte, blocks*BlockSize)
			st := bs
			XORKeyStreamBlocks(&st, rounds, gotBlocks, src[:blocks*BlockSize])
			restore()
			require.Equal(t, want, got, "%s: rounds %d, offset %d, length %d", name, rounds, off, n)
			require.Equal(t, wantBlocks, gotBlocks, "%s: rounds %d, %d blocks from counter %#x", name, rounds, blocks, counter)
			require.Equal(t, refState, st, "%s: state", name)
		}
	})
}

// TestKernelsNeverOverrunShortOutput: a destination shorter than the source
// is a caller bug. The assembly paths panic; the generic one stops at the
// end of dst. Either way nothing past len(dst) may change, even where the
// slice's capacity would allow it.
func TestKernelsNeverOverrunShortOutput(t *testing.T) {
	src := make([]byte, 4*BlockSize)
	core.ForEachKernel(t, func(t *testing.T) {
		for _, n := range []int{BlockSize, 4 * BlockSize} {
			backing := make([]byte, n)
			dst := backing[:n-BlockSize]
			var s State
			func() {
				defer func() { _ = recover() }()
				XORKeyStreamBlocks(&s, 20, dst, src[:n])
			}()
			assert.Equal(t, make([]byte, BlockSize), backing[n-BlockSize:], "%d-byte source, %d-byte destination", n, len(dst))
		}
	})
}
