//go:build gc && !purego

package aeadcore

import (
	"fmt"
	"testing"
)

// BenchmarkShortKernels times the 256-byte kernels side by side, past
// dispatch, for choosing between them (docs/KERNELS.md).
func BenchmarkShortKernels(b *testing.B) {
	if !hasIFMA {
		b.Skip("the CPU lacks AVX-512 IFMA or VBMI2")
	}
	var s [16]uint32
	var tag [16]byte
	buf := make([]byte, 256)
	ad := make([]byte, 13)
	for _, size := range []int{64, 128, 192, 256} {
		m := buf[:size]
		for _, k := range []struct {
			name string
			seal func()
			open func()
		}{
			{"AVX512x4", func() { chachaPolyAVX512x4Seal(&s, 20, m, m, ad, &tag) },
				func() { chachaPolyAVX512x4Open(&s, 20, m, m, ad, &tag) }},
			{"IFMAx4", func() { chachaPolyIFMAx4Seal(&s, 20, m, m, ad, &tag) },
				func() { chachaPolyIFMAx4Open(&s, 20, m, m, ad, &tag) }},
		} {
			b.Run(fmt.Sprintf("Seal/%s/%dB", k.name, size), func(b *testing.B) {
				b.SetBytes(int64(size))
				for b.Loop() {
					k.seal()
				}
			})
			b.Run(fmt.Sprintf("Open/%s/%dB", k.name, size), func(b *testing.B) {
				b.SetBytes(int64(size))
				for b.Loop() {
					k.open()
				}
			})
		}
	}
}
