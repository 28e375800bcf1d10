package poly1305

import (
	"fmt"
	"testing"

	//lint:ignore SA1019 x/crypto's Poly1305 is the baseline we measure against.
	xpoly "golang.org/x/crypto/poly1305"
)

var benchSizes = []int{64, 1024, 8 << 10, 64 << 10}

// BenchmarkPoly1305 measures the one-shot Sum on every kernel this CPU
// runs, with x/crypto's Sum beside them in the same run.
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
			for _, n := range benchSizes {
				msg := make([]byte, n)
				b.Run(fmt.Sprint(n), func(b *testing.B) {
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
