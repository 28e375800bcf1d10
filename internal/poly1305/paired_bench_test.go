package poly1305

import (
	"testing"
	"time"

	//lint:ignore SA1019 x/crypto's Poly1305 is the baseline we measure against.
	xpoly "golang.org/x/crypto/poly1305"
)

// BenchmarkPaired runs our Poly1305 (the kernel dispatch picks) and
// x/crypto's (amd64 assembly) in alternating slices of about 20 µs within
// one benchmark, and reports each one's MB/s and speedup-vs-xcrypto, the
// ratio of their accumulated times. On a machine shared with other work the
// load then falls on both alike, and the ratio stays meaningful where
// separate benchmarks run seconds apart scatter by tens of percent. ns/op
// and MB/s of the benchmark itself cover one slice of each.
func BenchmarkPaired(b *testing.B) {
	sizes := []struct {
		name string
		n    int
	}{{"64B", 64}, {"256B", 256}, {"1KiB", 1 << 10}, {"8KiB", 8 << 10}, {"64KiB", 64 << 10}}
	var key [KeySize]byte
	for i := range key {
		key[i] = byte(3 * i)
	}
	for _, sz := range sizes {
		b.Run(sz.name, func(b *testing.B) {
			msg := make([]byte, sz.n)
			var tag [TagSize]byte
			reps := max(1, (64<<10)/sz.n)
			contenders := []func(){
				func() { Sum(&tag, msg, &key) },
				func() { xpoly.Sum(&tag, msg, &key) },
			}
			var spent [2]time.Duration
			b.SetBytes(int64(2 * reps * sz.n))
			b.ReportAllocs()
			for b.Loop() {
				for k, run := range contenders {
					start := time.Now()
					for range reps {
						run()
					}
					spent[k] += time.Since(start)
				}
			}
			bytes := float64(b.N) * float64(reps*sz.n)
			mbs := func(d time.Duration) float64 { return bytes / d.Seconds() / 1e6 }
			b.ReportMetric(mbs(spent[0]), "ours-MB/s")
			b.ReportMetric(mbs(spent[1]), "xcrypto-MB/s")
			b.ReportMetric(spent[1].Seconds()/spent[0].Seconds(), "speedup-vs-xcrypto")
		})
	}
}
