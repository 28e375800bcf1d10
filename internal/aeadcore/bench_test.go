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
	buf := make([]byte, max(MaxChaCha, MaxSecretbox))
	ad := make([]byte, 13)
	run := func(name string, size int, op func(msg []byte)) {
		b.Run(fmt.Sprintf("%s/%dB", name, size), func(b *testing.B) {
			b.SetBytes(int64(size))
			cpu := testutil.StartCPUTimer(b)
			for b.Loop() {
				op(buf[:size])
			}
			cpu.Report(size)
		})
	}
	for _, size := range []int{64, 128, 192, 256, 288, 480, 512, 1024} {
		if size <= 256 || size >= 480 {
			run("ChaChaSeal", size, func(m []byte) { SealChaCha(&s, 20, m, m, ad, &tag) })
			run("ChaChaOpen", size, func(m []byte) { OpenChaCha(&s, 20, m, m, ad, &tag) })
		}
		if size <= MaxSecretbox {
			run("SecretboxSeal", size, func(m []byte) { SealSecretbox(&s, 20, m, m, &tag) })
		}
	}
}
