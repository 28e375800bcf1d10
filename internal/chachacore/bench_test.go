package chachacore

import (
	"fmt"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
)

// benchSizes are named like pkg/chacha20's benchmark sizes so bench-compare
// can line the two up.
var benchSizes = []struct {
	name string
	n    int
}{
	{"64B", 64}, {"128B", 128}, {"256B", 256}, {"512B", 512},
	{"1KiB", 1 << 10}, {"8KiB", 8 << 10}, {"64KiB", 64 << 10},
}

// BenchmarkKernels measures each path this CPU runs on whole blocks (one
// XORKeyStream call per iteration, in place), without the key stream's
// buffering above it: per kernel, round count and size.
// Select one path with -bench 'Kernels/avx2/'. Besides wall time it
// reports the thread's CPU time (cpu-ns/op, cpu-MB/s), which a shared,
// loaded machine disturbs much less.
func BenchmarkKernels(b *testing.B) {
	var s State
	Init(&s, make([]byte, 32), make([]byte, 12))
	buf := make([]byte, 64<<10)
	for _, name := range Kernels() {
		for _, rounds := range roundCounts {
			for _, size := range benchSizes {
				n := size.n
				b.Run(fmt.Sprintf("%s/r%d/%s", name, rounds, size.name), func(b *testing.B) {
					restore, err := UseKernel(name)
					if err != nil {
						b.Fatal(err)
					}
					defer restore()
					b.SetBytes(int64(n))
					b.ReportAllocs()
					cpu := testutil.StartCPUTimer(b)
					for b.Loop() {
						XORKeyStream(&s, rounds, buf[:n], buf[:n])
					}
					cpu.Report(n)
				})
			}
		}
	}
}

// BenchmarkXORBlocksGeneric measures the generic kernel alone, without the
// dispatch and buffering above it, for tuning generic.go.
func BenchmarkXORBlocksGeneric(b *testing.B) {
	var s State
	Init(&s, make([]byte, 32), make([]byte, 12))
	buf := make([]byte, 64<<10)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		xorBlocksGeneric(&s, 20, buf, buf)
	}
}
