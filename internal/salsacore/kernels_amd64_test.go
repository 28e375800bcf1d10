//go:build gc && !purego

package salsacore

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
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

// TestGatesCoverRequiredFeatures: every kernel uses only extensions its
// path's gate in xor_amd64.go checks (see
// kerneltest.GatesCoverRequiredFeatures).
func TestGatesCoverRequiredFeatures(t *testing.T) {
	kerneltest.GatesCoverRequiredFeatures(t, "salsa_amd64.s", map[string][]string{
		"salsaAVX512": {"AVX", "AVX2", "AVX512F", "AVX512VL"},
		"salsaAVX2":   {"AVX", "AVX2"},
		"salsaSSSE3":  {"SSE2", "SSSE3"},
	}, len(functions()))
}
