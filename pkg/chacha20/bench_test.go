package chacha20_test

import (
	"fmt"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/pkg/chacha20"
	xchacha "golang.org/x/crypto/chacha20"
)

// benchSizes are the message sizes of BenchmarkXORKeyStream, from one block
// to long bulk transfers.
var benchSizes = []struct {
	name string
	n    int
}{
	{"64B", 64}, {"256B", 256}, {"1KiB", 1 << 10}, {"8KiB", 8 << 10},
	{"64KiB", 64 << 10}, {"1MiB", 1 << 20},
}

// BenchmarkXORKeyStream measures one XORKeyStream call per iteration on a
// cipher created beforehand, named <variant>/<size>/impl=ours. Where
// x/crypto has the same variant, impl=xcrypto runs its identical operation
// right after, so one run gives the ratio:
//
//	go test -run '^$' -bench XORKeyStream -count 6 ./pkg/chacha20 > out.txt
//	benchstat -col /impl out.txt
//
// x/crypto's chacha20 is pure Go on amd64; add -tags purego to compare our
// generic kernel with it.
func BenchmarkXORKeyStream(b *testing.B) {
	key := make([]byte, chacha20.KeySize)
	variants := []struct {
		name   string
		nonce  int
		rounds int
		xcrypt bool // x/crypto implements this variant
	}{
		{"chacha20", chacha20.NonceSize, 20, true},
		{"xchacha20", chacha20.NonceSizeX, 20, true},
		{"chacha20-djb", chacha20.NonceSizeDJB, 20, false},
		{"chacha12", chacha20.NonceSizeDJB, 12, false},
		{"chacha8", chacha20.NonceSizeDJB, 8, false},
	}
	for _, v := range variants {
		for _, sz := range benchSizes {
			nonce := make([]byte, v.nonce)
			buf := make([]byte, sz.n)
			b.Run(fmt.Sprintf("%s/%s/impl=ours", v.name, sz.name), func(b *testing.B) {
				c, err := chacha20.NewWithRounds(key, nonce, v.rounds)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(sz.n))
				b.ReportAllocs()
				cpu := testutil.StartCPUTimer(b)
				for b.Loop() {
					c.XORKeyStream(buf, buf)
				}
				cpu.Report(sz.n)
			})
			if !v.xcrypt {
				continue
			}
			b.Run(fmt.Sprintf("%s/%s/impl=xcrypto", v.name, sz.name), func(b *testing.B) {
				c, err := xchacha.NewUnauthenticatedCipher(key, nonce)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(sz.n))
				b.ReportAllocs()
				cpu := testutil.StartCPUTimer(b)
				for b.Loop() {
					c.XORKeyStream(buf, buf)
				}
				cpu.Report(sz.n)
			})
		}
	}
}
