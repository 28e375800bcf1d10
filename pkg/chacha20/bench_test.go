package chacha20_test

import (
	"fmt"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/streamtest"
	"github.com/spipe-dev/spipe/pkg/chacha20"
	xchacha "golang.org/x/crypto/chacha20"
)

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
		for _, sz := range streamtest.BenchSizes {
			nonce := make([]byte, v.nonce)
			buf := make([]byte, sz.N)
			b.Run(fmt.Sprintf("%s/%s/impl=ours", v.name, sz.Name), func(b *testing.B) {
				c, err := chacha20.NewUnauthenticatedCipherWithRounds(key, nonce, v.rounds)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(sz.N))
				b.ReportAllocs()
				cpu := testutil.StartCPUTimer(b)
				for b.Loop() {
					c.XORKeyStream(buf, buf)
				}
				cpu.Report(sz.N)
			})
			if !v.xcrypt {
				continue
			}
			b.Run(fmt.Sprintf("%s/%s/impl=xcrypto", v.name, sz.Name), func(b *testing.B) {
				c, err := xchacha.NewUnauthenticatedCipher(key, nonce)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(sz.N))
				b.ReportAllocs()
				cpu := testutil.StartCPUTimer(b)
				for b.Loop() {
					c.XORKeyStream(buf, buf)
				}
				cpu.Report(sz.N)
			})
		}
	}
}
