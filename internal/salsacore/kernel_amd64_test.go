//go:build gc && !purego

package salsacore

import (
	"os"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/cpu"
)

// functions lists the generated kernels, each called the way the
// dispatcher calls it (the vertical ones with firstRound's
// precomputation), for the tests that run them directly.
func functions() []kerneltest.Function {
	pre := func(k func(s *[16]uint32, rounds int, dst, src []byte, pre *[17]uint32)) kerneltest.BlocksFunc {
		return func(s *[16]uint32, rounds int, dst, src []byte) {
			p := firstRound(s)
			k(s, rounds, dst, src, &p)
		}
	}
	return []kerneltest.Function{
		{Name: "salsaAVX512x32", Fn: pre(salsaAVX512x32), Supported: hasAVX512, Multiple: 32},
		{Name: "salsaAVX512x16", Fn: pre(salsaAVX512x16), Supported: hasAVX512, Multiple: 1},
		{Name: "salsaAVX512x8", Fn: salsaAVX512x8, Supported: hasAVX512, Multiple: 1},
		{Name: "salsaAVX512x4", Fn: salsaAVX512x4, Supported: hasAVX512, Multiple: 1},
		{Name: "salsaAVX512x1", Fn: salsaAVX512x1, Supported: hasAVX512, Multiple: 1},
		{Name: "salsaAVX2x8", Fn: pre(salsaAVX2x8), Supported: hasAVX2, Multiple: 1},
		{Name: "salsaAVX2x4", Fn: salsaAVX2x4, Supported: hasAVX2, Multiple: 1},
		{Name: "salsaAVX2x2", Fn: salsaAVX2x2, Supported: hasAVX2, Multiple: 1},
		{Name: "salsaSSSE3x4", Fn: pre(salsaSSSE3x4), Supported: hasSSSE3, Multiple: 1},
		{Name: "salsaSSSE3x1", Fn: salsaSSSE3x1, Supported: hasSSSE3, Multiple: 1},
	}
}

// TestFunctionsMatchGeneric runs each generated kernel directly on every
// block count it takes up to 40 (see kerneltest.EveryFunctionMatchesGeneric).
func TestFunctionsMatchGeneric(t *testing.T) {
	kerneltest.EveryFunctionMatchesGeneric(t, core, functions())
}

// bestKernel is what dispatch must pick on this CPU, derived from the CPU
// features independently of the registration code.
func bestKernel() string {
	switch {
	case cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX && cpu.X86.HasAVX2:
		return "avx512"
	case cpu.X86.HasAVX && cpu.X86.HasAVX2:
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
