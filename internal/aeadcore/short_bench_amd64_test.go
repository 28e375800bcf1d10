//go:build gc && !purego

package aeadcore

import (
	"fmt"
	"testing"
)

// BenchmarkShortKernels times the kernels for 64-512 bytes side by side, past
// dispatch, for choosing between them (docs/KERNELS.md).
func BenchmarkShortKernels(b *testing.B) {
	if !hasIFMA {
		b.Skip("the CPU lacks AVX-512 IFMA or VBMI2")
	}
	var s [16]uint32
	var tag [16]byte
	buf := make([]byte, 512)
	ad := make([]byte, 13)
	for _, size := range []int{64, 128, 192, 256, 320, 384, 448, 512} {
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
			{"IFMAx8", func() { chachaPolyIFMAx8Seal(&s, 20, m, m, ad, &tag) },
				func() { chachaPolyIFMAx8Open(&s, 20, m, m, ad, &tag) }},
			{"IFMAx16", func() { chachaPolyIFMAx16Seal(&s, 20, m, m, ad, &tag) },
				func() { chachaPolyIFMAx16Open(&s, 20, m, m, ad, &tag) }},
		} {
			if k.name == "AVX512x4" && size > 256 || k.name == "IFMAx4" && size > 256 || k.name == "IFMAx16" && size < 256 {
				continue
			}
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
