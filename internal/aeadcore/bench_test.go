package aeadcore

import (
	"fmt"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
)

// BenchmarkKernels measures each kernel through the package's functions
// (the state set up once: what pkg/aead adds per message is its own
// benchmark's), per construction, operation and size, with the thread's
// CPU time beside the wall time.
func BenchmarkKernels(b *testing.B) {
	var s [16]uint32
	var tag [16]byte
	buf := make([]byte, MaxSecretbox)
	ad := make([]byte, 13)
	for _, size := range []int{64, 128, 192, 256, 288, 480} {
		name := fmt.Sprintf("%dB", size)
		if size <= MaxChaCha {
			b.Run("ChaChaSeal/"+name, func(b *testing.B) {
				b.SetBytes(int64(size))
				cpu := testutil.StartCPUTimer(b)
				for b.Loop() {
					SealChaCha(&s, 20, buf[:size], buf[:size], ad, &tag)
				}
				cpu.Report(size)
			})
			b.Run("ChaChaOpen/"+name, func(b *testing.B) {
				b.SetBytes(int64(size))
				cpu := testutil.StartCPUTimer(b)
				for b.Loop() {
					OpenChaCha(&s, 20, buf[:size], buf[:size], ad, &tag)
				}
				cpu.Report(size)
			})
		}
		b.Run("SecretboxSeal/"+name, func(b *testing.B) {
			b.SetBytes(int64(size))
			cpu := testutil.StartCPUTimer(b)
			for b.Loop() {
				SealSecretbox(&s, 20, buf[:size], buf[:size], &tag)
			}
			cpu.Report(size)
		})
	}
}
