package chachacore

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryKernelMatchesGeneric holds each kernel, through the dispatcher,
// to the generic reference (see kerneltest.EveryKernelMatchesGeneric): only
// word 12, the low counter word, may change.
func TestEveryKernelMatchesGeneric(t *testing.T) {
	kerneltest.EveryKernelMatchesGeneric(t, core)
}

// TestKernelsCounterWrap starts each kernel at every counter from 2^32-40
// to 2^32-1 with block counts that span every lane of every kernel width, so
// the 32-bit counter wraps inside a vertical group, a row group and between
// two interleaved sets. The kernels count modulo 2^32; the reference does
// too.
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
					activeBlocks(&s, rounds, got, src[:n*BlockSize])
					require.Equal(t, want, got, "rounds %d, counter 2^32-%d, %d blocks", rounds, back, n)
					require.Equal(t, ref, s, "state after the call")
				}
			}
		}
	})
}

// TestKernelsLongCalls compares whole calls at sizes that exercise every
// combination of the 32-block, 16-block and row kernels, and past the
// 64 KiB bound on one assembly call, with unaligned source and
// destination.
func TestKernelsLongCalls(t *testing.T) {
	r := testutil.Rand(t)
	var sizes []int
	for n := 1; n <= 100; n++ {
		sizes = append(sizes, n)
	}
	sizes = append(sizes, 127, 128, 129, 255, 256, 257, 1000, 1024, 1025, 3000)
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
				activeBlocks(&s, rounds, got, src)
				require.Equal(t, want, got, "rounds %d, %d blocks", rounds, n)
				require.Equal(t, ref, s, "state after %d blocks", n)
			}
		}
	})
}

// TestKernelsAllocateNothing holds every path to zero allocations per call.
func TestKernelsAllocateNothing(t *testing.T) {
	buf := make([]byte, 100<<10)
	var s State
	var head [BlockSize]byte
	core.ForEachKernel(t, func(t *testing.T) {
		for _, n := range []int{1, BlockSize, 100, 4 * BlockSize, 8 * BlockSize, 9 * BlockSize, 1024, 5000, 64 << 10, len(buf)} {
			allocs := testing.AllocsPerRun(20, func() { XORKeyStream(&s, 20, buf[:n], buf[:n]) })
			assert.Zero(t, allocs, "%d bytes", n)
			allocs = testing.AllocsPerRun(20, func() { XORKeyStream64(&s, 20, buf[:n], buf[:n]) })
			assert.Zero(t, allocs, "XORKeyStream64, %d bytes", n)
			allocs = testing.AllocsPerRun(20, func() { XORKeyStreamHead(&s, 20, &head, buf[:n], buf[:n]) })
			assert.Zero(t, allocs, "XORKeyStreamHead, %d bytes", n)
		}
	})
}

// TestKernelsNeverOverrunShortOutput: a destination shorter than the source
// is a caller bug. Every path panics before writing, even where the
// slice's capacity would allow a write past len(dst).
func TestKernelsNeverOverrunShortOutput(t *testing.T) {
	src := make([]byte, 4*BlockSize)
	var head [BlockSize]byte
	core.ForEachKernel(t, func(t *testing.T) {
		for _, n := range []int{BlockSize, 4 * BlockSize} {
			for name, xor := range map[string]func(s *State, dst []byte){
				"XORKeyStream":     func(s *State, dst []byte) { XORKeyStream(s, 20, dst, src[:n]) },
				"XORKeyStream64":   func(s *State, dst []byte) { XORKeyStream64(s, 20, dst, src[:n]) },
				"XORKeyStreamHead": func(s *State, dst []byte) { XORKeyStreamHead(s, 20, &head, dst, src[:n]) },
			} {
				backing := make([]byte, n)
				var s State
				assert.Panics(t, func() { xor(&s, backing[:n-1]) }, "%s, %d-byte source", name, n)
				assert.Equal(t, make([]byte, n), backing, "%s, %d-byte source: nothing written", name, n)
				assert.Equal(t, State{}, s, "%s: state untouched", name)
			}
		}
	})
}
