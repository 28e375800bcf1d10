package aead

import (
	"fmt"
	"testing"

	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/nacl/secretbox"

	"github.com/spipe-dev/spipe/internal/chachacore"
	"github.com/spipe-dev/spipe/internal/poly1305"
	"github.com/spipe-dev/spipe/internal/salsacore"
)

var benchSizes = []struct {
	name string
	n    int
}{{"64B", 64}, {"256B", 256}, {"1KiB", 1024}, {"8KiB", 8 * 1024}, {"64KiB", 64 * 1024}}

// benchImpl is one construction under measurement: ours, or the x/crypto
// package it is measured against.
type benchImpl struct {
	name string
	aead sealOpener
}

// secretboxRef gives x/crypto's nacl/secretbox the same method shape as
// boxAdapter gives ours, so the benchmarks treat both sides alike (the
// array conversions cost nothing).
type secretboxRef struct{ key [32]byte }

func (secretboxRef) NonceSize() int { return NonceSizeX }
func (r secretboxRef) Seal(dst, nonce, plaintext, _ []byte) []byte {
	return secretbox.Seal(dst, plaintext, (*[24]byte)(nonce), &r.key)
}
func (r secretboxRef) Open(dst, nonce, box, _ []byte) ([]byte, error) {
	out, ok := secretbox.Open(dst, box, (*[24]byte)(nonce), &r.key)
	if !ok {
		return nil, ErrOpen
	}
	return out, nil
}

// benchConstructions lists each suite with its x/crypto counterpart, if any.
func benchConstructions(b *testing.B) []struct {
	suite Suite
	impls []benchImpl
} {
	key := make([]byte, KeySize)
	refChaCha, _ := chacha20poly1305.New(key)
	refX, _ := chacha20poly1305.NewX(key)
	var out []struct {
		suite Suite
		impls []benchImpl
	}
	for _, s := range Suites() {
		impls := []benchImpl{{"ours", mustAny(b, s, key)}}
		switch s {
		case ChaCha20Poly1305:
			impls = append(impls, benchImpl{"xcrypto", refChaCha})
		case XChaCha20Poly1305:
			impls = append(impls, benchImpl{"xcrypto", refX})
		case XSalsa20Poly1305:
			impls = append(impls, benchImpl{"xcrypto", secretboxRef{}})
		}
		out = append(out, struct {
			suite Suite
			impls []benchImpl
		}{s, impls})
	}
	return out
}

// benchName is a suite's benchmark path element, as before the suites
// had lower-case names, so that scripts/bench-aead.sh and earlier result
// files keep matching.
func benchName(s Suite) string {
	return map[Suite]string{
		ChaCha20Poly1305:  "ChaCha20Poly1305",
		XChaCha20Poly1305: "XChaCha20Poly1305",
		XSalsa20Poly1305:  "XSalsa20Poly1305",
		ChaCha12Poly1305:  "ChaCha12Poly1305",
		ChaCha8Poly1305:   "ChaCha8Poly1305",
		XSalsa12Poly1305:  "XSalsa20_12Poly1305",
	}[s]
}

func BenchmarkSeal(b *testing.B) {
	for _, c := range benchConstructions(b) {
		for _, size := range benchSizes {
			for _, impl := range c.impls {
				b.Run(benchName(c.suite)+"/"+size.name+"/"+impl.name, func(b *testing.B) {
					nonce := make([]byte, impl.aead.NonceSize())
					msg := make([]byte, size.n)
					dst := make([]byte, 0, size.n+TagSize)
					b.SetBytes(int64(size.n))
					b.ReportAllocs()
					for b.Loop() {
						impl.aead.Seal(dst, nonce, msg, nil)
					}
				})
			}
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	for _, c := range benchConstructions(b) {
		for _, size := range benchSizes {
			for _, impl := range c.impls {
				b.Run(benchName(c.suite)+"/"+size.name+"/"+impl.name, func(b *testing.B) {
					nonce := make([]byte, impl.aead.NonceSize())
					box := impl.aead.Seal(nil, nonce, make([]byte, size.n), nil)
					dst := make([]byte, 0, size.n)
					b.SetBytes(int64(size.n))
					b.ReportAllocs()
					for b.Loop() {
						if _, err := impl.aead.Open(dst, nonce, box, nil); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkParts measures the parts of an AEAD alone — Poly1305
// (internal/poly1305, the kernel dispatch picks), the bare keystream of
// each cipher from our cores, and the subkey an extended-nonce
// construction derives per message (HChaCha20 for XChaCha20-Poly1305,
// HSalsa20 for secretbox) — to show what bounds the AEAD, and for
// scripts/bench-aead.sh's targets on the extended constructions.
func BenchmarkParts(b *testing.B) {
	var key [32]byte
	var nonce [16]byte
	var sub [32]byte
	b.Run("HChaCha20", func(b *testing.B) {
		for b.Loop() {
			chachacore.HChaCha(&sub, &key, &nonce, 20)
		}
	})
	b.Run("HSalsa20", func(b *testing.B) {
		for b.Loop() {
			salsacore.HSalsa(&sub, &key, &nonce, 20)
		}
	})
	for _, size := range benchSizes {
		b.Run("Poly1305/"+size.name, func(b *testing.B) {
			var key [32]byte
			var tag [16]byte
			msg := make([]byte, size.n)
			b.SetBytes(int64(size.n))
			b.ReportAllocs()
			for b.Loop() {
				poly1305.Sum(&tag, msg, &key)
			}
		})
		for _, rounds := range []int{20, 12, 8} {
			b.Run(fmt.Sprintf("ChaCha%d/%s", rounds, size.name), func(b *testing.B) {
				var s chachacore.State
				buf := make([]byte, size.n)
				b.SetBytes(int64(size.n))
				for b.Loop() {
					chachacore.XORKeyStream(&s, rounds, buf, buf)
				}
			})
		}
		for _, rounds := range []int{20, 12} {
			b.Run(fmt.Sprintf("Salsa20_%d/%s", rounds, size.name), func(b *testing.B) {
				var s salsacore.State
				buf := make([]byte, size.n)
				b.SetBytes(int64(size.n))
				for b.Loop() {
					salsacore.XORKeyStream(&s, rounds, buf, buf)
				}
			})
		}
	}
}
