package poly1305

import (
	"testing"

	//lint:ignore SA1019 x/crypto's Poly1305 is the baseline we measure against.
	xpoly "golang.org/x/crypto/poly1305"
)

var benchSizes = []struct {
	name string
	n    int
}{{"64B", 64}, {"256B", 256}, {"1KiB", 1 << 10}, {"8KiB", 8 << 10}, {"64KiB", 64 << 10}}

// BenchmarkPoly1305 measures the one-shot Sum on every kernel this CPU
// runs (BenchmarkPoly1305/<kernel>/<size>), with x/crypto's Sum beside them
// in the same run (BenchmarkPoly1305/x-crypto/<size>).
func BenchmarkPoly1305(b *testing.B) {
	var key [KeySize]byte
	for i := range key {
		key[i] = byte(i)
	}
	var tag [TagSize]byte
	for _, name := range append(Kernels(), "x-crypto") {
		b.Run(name, func(b *testing.B) {
			if name != "x-crypto" {
				restore, err := UseKernel(name)
				if err != nil {
					b.Fatal(err)
				}
				defer restore()
			}
			for _, sz := range benchSizes {
				n := sz.n
				msg := make([]byte, n)
				b.Run(sz.name, func(b *testing.B) {
					b.SetBytes(int64(n))
					b.ReportAllocs()
					if name == "x-crypto" {
						for b.Loop() {
							xpoly.Sum(&tag, msg, &key)
						}
						return
					}
					for b.Loop() {
						Sum(&tag, msg, &key)
					}
				})
			}
		})
	}
}
