//go:build gc && !purego

package poly1305

import (
	"fmt"
	"os"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/cpu"
)

// bestKernel asks x/sys/cpu, independently of the init code, which kernel
// this CPU should get.
func bestKernel() string {
	switch {
	case cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512IFMA && cpu.X86.HasAVX512VBMI2 &&
		cpu.X86.HasBMI2 && cpu.X86.HasAVX2:
		return "avx512ifma"
	case cpu.X86.HasAVX2:
		return "avx2"
	}
	return "scalar"
}

// TestDispatchPicksBestKernel fails if dispatch settled for less than the
// CPU offers, which is how a wrongly gated kernel would hide. Under an
// emulated CPU model (make test-qemu) SPIPE_EXPECT_POLY1305_KERNEL, or the
// cipher kernel the job expects in SPIPE_EXPECT_KERNEL (avx2 on Haswell,
// ssse3 on Penryn), proves the run tested the path it meant to.
func TestDispatchPicksBestKernel(t *testing.T) {
	require.Equal(t, bestKernel(), Kernel(), "kernels available: %v", Kernels())
	assert.Equal(t, Kernel(), Kernels()[0])
	assert.Equal(t, "generic", Kernels()[len(Kernels())-1])
	want := os.Getenv("SPIPE_EXPECT_POLY1305_KERNEL")
	if want == "" {
		want = map[string]string{"avx2": "avx2", "ssse3": "scalar"}[os.Getenv("SPIPE_EXPECT_KERNEL")]
	}
	if want != "" {
		require.Equal(t, want, Kernel())
	}
}

func TestUseKernelErrors(t *testing.T) {
	_, err := UseKernel("no-such-kernel")
	assert.Error(t, err)
}

// TestKernelsFromExtremeStates starts every kernel from the accumulators
// of extremeState (the first 8 with the largest clamped r over the whole
// message), and compares the new accumulator, reduced mod p, with the
// generic reference's.
func TestKernelsFromExtremeStates(t *testing.T) {
	r := testutil.Rand(t)
	msg := testutil.Bytes(r, 4096)
	for i := range 64 {
		st := extremeState(r, i)
		n := 16 * r.IntN(len(msg)/16+1)
		if i < 8 {
			n = len(msg)
			st.r = [2]uint64{rMask0, rMask1} // the largest clamped r
		}
		want := st
		blocksGeneric(&want, msg[:n])
		checkEveryKernel(t, st, want, func(got *state) { updateBlocks(got, msg[:n]) }, fmt.Sprintf("%d bytes", n))
	}
}

// ifmaThresholdForTest is the shortest Write the IFMA kernel takes.
const ifmaThresholdForTest = ifmaMinBytes

// TestKernelsSeveralCalls runs updateBlocks several times on one state,
// from the extreme accumulators of TestKernelsFromExtremeStates, and
// compares with the reference after each call.
func TestKernelsSeveralCalls(t *testing.T) {
	r := testutil.Rand(t)
	msg := testutil.Bytes(r, 3*4096)
	for i := range 32 {
		var st state
		st.init(randomKey(r))
		st.h = [3]uint64{^uint64(0), ^uint64(0), uint64(4 + i%2)}
		cuts := []int{16 * r.IntN(300), 16 * r.IntN(30), 16 * r.IntN(256)}
		for _, name := range Kernels() {
			restore, err := UseKernel(name)
			require.NoError(t, err)
			got, ref := st, st
			rest := msg
			for _, n := range cuts {
				updateBlocks(&got, rest[:n])
				blocksGeneric(&ref, rest[:n])
				rest = rest[n:]
				require.LessOrEqual(t, got.h[2], uint64(5), "%s: h[2] out of range", name)
				assert.Equal(t, reduce3(ref.h), reduce3(got.h), "%s: cuts %v", name, cuts)
			}
			restore()
		}
	}
}

// TestIFMACallBytes splits lengths around multiples of the call bound as
// the IFMA kernel's callers do: every piece is a multiple of 16 within
// [ifmaMinBytes, maxCallBytes], and the pieces add up.
func TestIFMACallBytes(t *testing.T) {
	for _, base := range []int{ifmaMinBytes, maxCallBytes, 2 * maxCallBytes} {
		for n := base - 512; n <= base+512; n += 16 {
			if n < ifmaMinBytes {
				continue
			}
			total := 0
			for left := n; left > 0; {
				k := ifmaCallBytes(left)
				require.Zero(t, k%16, "%d bytes: piece %d", n, k)
				require.GreaterOrEqual(t, k, ifmaMinBytes, "%d bytes", n)
				require.LessOrEqual(t, k, maxCallBytes, "%d bytes", n)
				total += k
				left -= k
			}
			assert.Equal(t, n, total)
		}
	}
}
