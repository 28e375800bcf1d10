//go:build gc && !purego

package aeadcore

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/cpu"

	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
)

// TestDispatch: the kernels run on every CPU whose features they need
// (asked of x/sys/cpu here, apart from the gate) and on no other; under
// qemu's CPU models (SPIPE_EXPECT_KERNEL names the cores' tier, below
// AVX-512) that means none.
func TestDispatch(t *testing.T) {
	want := "generic"
	x := cpu.X86
	if x.HasAVX512F && x.HasAVX512VL && x.HasAVX512BW && x.HasBMI2 && x.HasAVX2 {
		want = "avx512"
		if x.HasAVX512IFMA && x.HasAVX512VBMI2 {
			want = "avx512ifma"
		}
	}
	if e := os.Getenv("SPIPE_EXPECT_KERNEL"); e != "" && e != "avx512" && e != "avx512ifma" {
		assert.Equal(t, "generic", want, "SPIPE_EXPECT_KERNEL=%s", e)
	}
	assert.Equal(t, want, Kernel())
}

// TestGatesCoverRequiredFeatures: the kernels use only extensions the
// gate in dispatch_amd64.go checks (see
// kerneltest.GatesCoverRequiredFeatures).
func TestGatesCoverRequiredFeatures(t *testing.T) {
	gate := []string{"AVX", "AVX2", "AVX512F", "AVX512VL", "AVX512BW", "BMI2", "CMOV"}
	kerneltest.GatesCoverRequiredFeatures(t, "aead_amd64.s", map[string][]string{
		"chachaPolyAVX512": gate,
		"secretboxAVX512":  gate,
		"chachaPolyIFMA":   append(gate, "AVX512IFMA", "AVX512VBMI2"),
		"secretboxIFMA":    append(gate, "AVX512IFMA", "AVX512VBMI2"),
	}, 22)
}
