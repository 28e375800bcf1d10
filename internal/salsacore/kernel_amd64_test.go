//go:build gc && !purego

package salsacore

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/cpu"
)

// kernelFunc is the shape of the diagonal-layout kernels: blocks > 0 whole
// blocks from src to dst, counter in s[8].
type kernelFunc func(s *[16]uint32, rounds int, dst, src *byte, blocks int)

// verticalFunc is the shape of the vertical kernels, which also take the
// counter-independent part of the first round (see firstRound).
type verticalFunc func(s *[16]uint32, pre *[17]uint32, rounds int, dst, src *byte, blocks int)

// rawKernel is one generated function, tested on every block count
// whatever the dispatcher would route to it.
type rawKernel struct {
	name      string
	fn        kernelFunc
	supported bool
	multiple  int // block counts must be multiples of this (1 if any)
}

// withFirstRound gives a vertical kernel the shape of the others, passing
// it firstRound's precomputation as the dispatcher does.
func withFirstRound(v verticalFunc) kernelFunc {
	return func(s *[16]uint32, rounds int, dst, src *byte, blocks int) {
		pre := firstRound(s)
		v(s, &pre, rounds, dst, src, blocks)
	}
}

func rawKernels() []rawKernel {
	avx512 := cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL
	return []rawKernel{
		{"xorVerticalSSSE3", withFirstRound(xorVerticalSSSE3), true, 1},
		{"xorHorizontalSSSE3x1", xorHorizontalSSSE3x1, true, 1},
		{"xorVerticalAVX2", withFirstRound(xorVerticalAVX2), cpu.X86.HasAVX2, 1},
		{"xorHorizontalAVX2x2", xorHorizontalAVX2x2, cpu.X86.HasAVX2, 1},
		{"xorHorizontalAVX2x4", xorHorizontalAVX2x4, cpu.X86.HasAVX2, 1},
		{"xorVertical32AVX512", withFirstRound(xorVertical32AVX512), avx512, 32},
		{"xorVerticalAVX512", withFirstRound(xorVerticalAVX512), avx512, 1},
		{"xorHorizontalAVX512x1", xorHorizontalAVX512x1, avx512, 1},
		{"xorHorizontalAVX512x4", xorHorizontalAVX512x4, avx512, 1},
		{"xorHorizontalAVX512x8", xorHorizontalAVX512x8, avx512, 1},
	}
}

// TestRawKernelsMatchGeneric runs each generated function directly on 1..40
// blocks (every vertical batch size plus partial batches on both sides;
// 32, 64 and 96 for the two-state kernel, which takes only whole batches),
// from unaligned buffers with guard bytes around dst, for every round
// count, with the counter placed so that some runs wrap s[8].
func TestRawKernelsMatchGeneric(t *testing.T) {
	const guard = 64
	for _, k := range rawKernels() {
		if !k.supported {
			continue
		}
		t.Run(k.name, func(t *testing.T) {
			for _, rounds := range []int{8, 12, 20} {
				for blocks := k.multiple; blocks <= max(40, 3*k.multiple); blocks += k.multiple {
					for _, ctr := range []uint32{0, 7, 0xffffffff - 20} {
						s := testState(uint64(blocks)*31 + uint64(rounds))
						s[8] = ctr
						n := blocks * BlockSize
						src := randomBytes(n+1, uint64(blocks))[1:] // unaligned
						buf := make([]byte, n+2*guard+3)
						for i := range buf {
							buf[i] = 0xa5
						}
						dst := buf[guard+3 : guard+3+n]

						want := make([]byte, n)
						ws := s
						xorBlocksGeneric(&ws, rounds, want, src)

						gs := s
						k.fn(&gs, rounds, &dst[0], &src[0], blocks)
						msg := fmt.Sprintf("rounds %d, %d blocks, counter %#x", rounds, blocks, ctr)
						require.Equal(t, want, dst, msg)
						assert.Equal(t, ws, gs, "state after the call: %s", msg)
						for i, b := range buf[:guard+3] {
							require.Equal(t, byte(0xa5), b, "write before dst at %d: %s", i, msg)
						}
						for i, b := range buf[guard+3+n:] {
							require.Equal(t, byte(0xa5), b, "write past dst at +%d: %s", i, msg)
						}

						// In place.
						in := append([]byte(nil), src...)
						ps := s
						k.fn(&ps, rounds, &in[0], &in[0], blocks)
						require.Equal(t, want, in, "in place: %s", msg)
					}
				}
			}
		})
	}
}

// bestKernel is what dispatch must pick on this CPU, derived from the CPU
// features independently of the registration code.
func bestKernel() string {
	switch {
	case cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL:
		return "avx512"
	case cpu.X86.HasAVX2:
		return "avx2"
	case cpu.X86.HasSSSE3:
		return "ssse3"
	}
	return "generic"
}

// TestDispatchPicksBestKernel fails if dispatch fell back to a lesser path
// than the CPU offers. Under qemu (make test-qemu) SPIPE_EXPECT_KERNEL
// names the path the emulated CPU model must get, which catches a CPU
// model whose features x/sys/cpu misreads as well as a broken gate.
func TestDispatchPicksBestKernel(t *testing.T) {
	assert.Equal(t, bestKernel(), Kernel())
	if want := os.Getenv("SPIPE_EXPECT_KERNEL"); want != "" {
		assert.Equal(t, want, Kernel(), "SPIPE_EXPECT_KERNEL")
	}
	assert.Equal(t, Kernel(), Kernels()[0])
	assert.Equal(t, "generic", Kernels()[len(Kernels())-1])
}
