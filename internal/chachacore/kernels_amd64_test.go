//go:build gc && !purego

package chachacore

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
)

// functions lists the generated kernels for the tests that run them
// directly. chachaAVX512x16h, whose counter starts after its head block,
// has TestXORKeyStreamHead.
func functions() []kerneltest.Function {
	return []kerneltest.Function{
		{Name: "chachaAVX512x32", Fn: chachaAVX512x32, Supported: hasAVX512, Multiple: 32},
		{Name: "chachaAVX512x16", Fn: chachaAVX512x16, Supported: hasAVX512, Multiple: 1},
		{Name: "chachaAVX512x8", Fn: chachaAVX512x8, Supported: hasAVX512, Multiple: 1},
		{Name: "chachaAVX512x4", Fn: chachaAVX512x4, Supported: hasAVX512, Multiple: 1},
		{Name: "chachaAVX512x2", Fn: chachaAVX512x2, Supported: hasAVX512, Multiple: 1},
		{Name: "chachaAVX512x1", Fn: chachaAVX512x1, Supported: hasAVX512, Multiple: 1},
		{Name: "chachaAVX2x8", Fn: chachaAVX2x8, Supported: hasAVX2, Multiple: 1},
		{Name: "chachaAVX2x2", Fn: chachaAVX2x2, Supported: hasAVX2, Multiple: 1},
		{Name: "chachaSSSE3x4", Fn: chachaSSSE3x4, Supported: hasSSSE3, Multiple: 1},
		{Name: "chachaSSSE3x1", Fn: chachaSSSE3x1, Supported: hasSSSE3, Multiple: 1},
	}
}

// TestFunctionsMatchGeneric runs each generated kernel directly on every
// block count it takes up to 40 (see kerneltest.EveryFunctionMatchesGeneric).
func TestFunctionsMatchGeneric(t *testing.T) {
	kerneltest.EveryFunctionMatchesGeneric(t, core, functions())
}

// TestGatesCoverRequiredFeatures: every kernel uses only extensions its
// path's gate in xor_amd64.go checks (see
// kerneltest.GatesCoverRequiredFeatures).
func TestGatesCoverRequiredFeatures(t *testing.T) {
	kerneltest.GatesCoverRequiredFeatures(t, "chacha_amd64.s", map[string][]string{
		"chachaAVX512": {"AVX", "AVX2", "AVX512F", "AVX512VL"},
		"chachaAVX2":   {"AVX", "AVX2"},
		"chachaSSSE3":  {"SSE2", "SSSE3"},
	}, len(functions())+1)
}
