// Package bench measures the ciphers' throughput on this machine for
// "spipe bench": the keystream of each ChaCha and Salsa variant and the
// seal rate of each AEAD suite.
package bench

import (
	"fmt"
	"time"

	"github.com/spipe-dev/spipe/pkg/aead"
	"github.com/spipe-dev/spipe/pkg/chacha20"
	"github.com/spipe-dev/spipe/pkg/salsa20"
)

// Case is one measurement: a name, what it measures and the kernel in
// use, and a function that processes a buffer in place.
type Case struct {
	Name   string // e.g. "chacha20/12" or "chacha20-poly1305"
	Kind   string // "keystream" or "aead seal"
	Kernel string
	Run    func(buf []byte)
}

// Result is a case's throughput.
type Result struct {
	Case
	BytesPerSec float64
}

// Cases lists every keystream variant, then every AEAD suite.
func Cases() ([]Case, error) {
	key := make([]byte, 32)
	var cases []Case
	for _, r := range []int{20, 12, 8} {
		c, err := chacha20.NewUnauthenticatedCipherWithRounds(key, make([]byte, chacha20.NonceSize), r)
		if err != nil {
			return nil, err
		}
		cases = append(cases, Case{Name: fmt.Sprintf("chacha%d", r), Kind: "keystream", Kernel: chacha20.Kernel(),
			Run: func(b []byte) { c.SetCounter(0); c.XORKeyStream(b, b) }})
	}
	for _, r := range []int{20, 12, 8} {
		c, err := salsa20.NewUnauthenticatedCipherWithRounds(key, make([]byte, salsa20.NonceSize), r)
		if err != nil {
			return nil, err
		}
		cases = append(cases, Case{Name: fmt.Sprintf("salsa%d", r), Kind: "keystream", Kernel: salsa20.Kernel(),
			Run: func(b []byte) { c.SetCounter(0); c.XORKeyStream(b, b) }})
	}
	for _, s := range aead.Suites() {
		run, kernel, err := sealer(s, key)
		if err != nil {
			return nil, err
		}
		cases = append(cases, Case{Name: s.String(), Kind: "aead seal", Kernel: kernel, Run: run})
	}
	return cases, nil
}

// sealer returns a function that seals a buffer under suite into a side
// buffer it keeps, so the measure allocates nothing per call, and the
// kernel of the suite's cipher.
func sealer(s aead.Suite, key []byte) (run func([]byte), kernel string, err error) {
	var out []byte
	grow := func(n int) []byte {
		if cap(out) < n+aead.TagSize {
			out = make([]byte, 0, n+aead.TagSize)
		}
		return out[:0]
	}
	if s.Secretbox() {
		box, err := aead.NewSecretbox(s, key)
		if err != nil {
			return nil, "", err
		}
		var nonce [aead.NonceSizeX]byte
		return func(b []byte) { out = box.Seal(grow(len(b)), &nonce, b) }, salsa20.Kernel(), nil
	}
	a, err := aead.New(s, key)
	if err != nil {
		return nil, "", err
	}
	nonce := make([]byte, a.NonceSize())
	return func(b []byte) { out = a.Seal(grow(len(b)), nonce, b, nil) }, chacha20.Kernel(), nil
}

// Measure runs c over a buffer of size bytes, repeatedly for about d,
// and returns its throughput.
func Measure(c Case, size int, d time.Duration) Result {
	buf := make([]byte, size)
	c.Run(buf) // warm up: first-use costs are not throughput
	var n int
	start := time.Now()
	for time.Since(start) < d {
		for range 8 {
			c.Run(buf)
		}
		n += 8
	}
	el := time.Since(start)
	return Result{Case: c, BytesPerSec: float64(n) * float64(size) / el.Seconds()}
}
