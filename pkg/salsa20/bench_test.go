package salsa20_test

import (
	"fmt"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/streamtest"
	"github.com/spipe-dev/spipe/pkg/salsa20"
	xsalsa20 "golang.org/x/crypto/salsa20"
	//lint:ignore SA1019 the low-level package is the reference for counters and the Salsa20/8 core; test-only.
	"golang.org/x/crypto/salsa20/salsa"
)

// BenchmarkXORKeyStream measures one XORKeyStream call per iteration on a
// cipher created beforehand, named <variant>/<size>/impl=ours. Where
// x/crypto has the same variant, impl=xcrypto runs its operation right
// after: for Salsa20 the keyed loop salsa.XORKeyStream (no per-call setup,
// like ours); for XSalsa20 salsa20.XORKeyStream, which also derives the
// subkey each call (one HSalsa20, small beside 64 KiB). One run gives the
// ratio:
//
//	go test -run '^$' -bench XORKeyStream -count 6 ./pkg/salsa20 > out.txt
//	benchstat -col /impl out.txt
//
// x/crypto has amd64 assembly for Salsa20/20; -tags purego compares both
// generic Go implementations.
func BenchmarkXORKeyStream(b *testing.B) {
	var key [32]byte
	variants := []struct {
		name   string
		nonce  int
		rounds int
	}{
		{"salsa20", salsa20.NonceSize, 20},
		{"xsalsa20", salsa20.NonceSizeX, 20},
		{"salsa20-12", salsa20.NonceSize, 12},
		{"salsa20-8", salsa20.NonceSize, 8},
	}
	for _, v := range variants {
		for _, sz := range streamtest.BenchSizes {
			nonce := make([]byte, v.nonce)
			buf := make([]byte, sz.N)
			b.Run(fmt.Sprintf("%s/%s/impl=ours", v.name, sz.Name), func(b *testing.B) {
				c, err := salsa20.NewUnauthenticatedCipherWithRounds(key[:], nonce, v.rounds)
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
			if v.rounds != 20 {
				continue // x/crypto has only Salsa20/20 streams
			}
			b.Run(fmt.Sprintf("%s/%s/impl=xcrypto", v.name, sz.Name), func(b *testing.B) {
				var counter [16]byte
				copy(counter[:], nonce)
				b.SetBytes(int64(sz.N))
				b.ReportAllocs()
				cpu := testutil.StartCPUTimer(b)
				for b.Loop() {
					if len(nonce) == salsa20.NonceSize {
						salsa.XORKeyStream(buf, buf, &counter, &key)
					} else {
						xsalsa20.XORKeyStream(buf, buf, nonce, &key)
					}
				}
				cpu.Report(sz.N)
			})
		}
	}
}
