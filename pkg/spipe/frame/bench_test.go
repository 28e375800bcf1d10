package frame

import (
	"testing"

	"github.com/spipe-dev/spipe/pkg/aead"
)

// BenchmarkFrame seals and opens one 16 KiB frame in memory: the CPU cost
// of the frame layer without the network, per suite.
func BenchmarkFrame(b *testing.B) {
	for _, suite := range aead.Suites() {
		b.Run(suite.String(), func(b *testing.B) {
			key := make([]byte, 32)
			seal, _ := NewCipher(suite, key)
			open, _ := NewCipher(suite, key)
			data := make([]byte, 16<<10)
			buf := make([]byte, 0, len(data)+Overhead+1)
			out := make([]byte, 0, len(data)+1)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for i := range b.N {
				f := seal.Seal(buf, uint64(i), Data, data, 0)
				if _, _, err := open.Open(out, f, uint64(i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
