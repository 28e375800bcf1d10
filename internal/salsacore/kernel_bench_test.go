package salsacore

import (
	"fmt"
	"testing"
)

// BenchmarkKernels measures each kernel this CPU runs, forced through
// UseKernel, on whole-block inputs (one XORKeyStreamBlocks call per
// iteration, in place), so the SIMD tiers can be compared with each other
// and with the generic code at every size. Names follow chachacore's
// BenchmarkKernels: kernel/rROUNDS/size.
func BenchmarkKernels(b *testing.B) {
	sizes := []struct {
		name string
		n    int
	}{{"64B", 64}, {"256B", 256}, {"1KiB", 1 << 10}, {"8KiB", 8 << 10}, {"64KiB", 64 << 10}}
	for _, name := range Kernels() {
		for _, rounds := range []int{20, 12, 8} {
			for _, sz := range sizes {
				b.Run(fmt.Sprintf("%s/r%d/%s", name, rounds, sz.name), func(b *testing.B) {
					restore, err := UseKernel(name)
					if err != nil {
						b.Fatal(err)
					}
					defer restore()
					s := testState(1)
					buf := make([]byte, sz.n)
					b.SetBytes(int64(sz.n))
					b.ReportAllocs()
					for b.Loop() {
						XORKeyStreamBlocks(&s, rounds, buf, buf)
					}
				})
			}
		}
	}
}
