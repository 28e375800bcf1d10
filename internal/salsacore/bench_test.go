package salsacore

import (
	"fmt"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
)

// BenchmarkKernels measures each kernel this CPU runs, forced through
// UseKernel, on whole-block inputs (one XORKeyStream call per iteration,
// in place), so the SIMD tiers can be compared with each other and with
// the generic code at every size. Names follow chachacore's
// BenchmarkKernels: kernel/rROUNDS/size. Besides wall time it reports the
// thread's CPU time (cpu-ns/op, cpu-MB/s), which other processes on a
// shared machine disturb much less.
func BenchmarkKernels(b *testing.B) {
	sizes := []struct {
		name string
		n    int
	}{{"64B", 64}, {"256B", 256}, {"512B", 512}, {"1KiB", 1 << 10}, {"8KiB", 8 << 10}, {"64KiB", 64 << 10}}
	var s State
	Init(&s, make([]byte, 32), make([]byte, 8))
	buf := make([]byte, 64<<10)
	for _, name := range Kernels() {
		for _, rounds := range []int{20, 12, 8} {
			for _, sz := range sizes {
				b.Run(fmt.Sprintf("%s/r%d/%s", name, rounds, sz.name), func(b *testing.B) {
					restore, err := UseKernel(name)
					if err != nil {
						b.Fatal(err)
					}
					defer restore()
					b.SetBytes(int64(sz.n))
					b.ReportAllocs()
					cpu := testutil.StartCPUTimer(b)
					for b.Loop() {
						XORKeyStream(&s, rounds, buf[:sz.n], buf[:sz.n])
					}
					cpu.Report(sz.n)
				})
			}
		}
	}
}
