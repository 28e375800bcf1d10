// Package streamtest holds the behaviour tests every stream cipher of this
// module must pass, whatever its family: chunking and in-place invariance,
// misuse panics, Seek and SetCounter consistency, no allocations, and the
// fuzz bodies for the same properties. A cipher package describes itself
// in a [Family] and calls the suites from its own TestXxx and FuzzXxx
// functions, so test names stay per package. It also holds the helpers the
// packages' vector and differential tests share.
//
// The suites compare a cipher only with itself (and with what a family
// passes in as a reference); the external vectors and the differential
// tests against golang.org/x/crypto stay in each package. It is imported
// only by _test.go files.
package streamtest

import (
	"math/rand/v2"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
	"github.com/stretchr/testify/require"
)

// BlockSize is the block size of every family here, in bytes.
const BlockSize = 64

// Stream is the part of a cipher the suites drive.
type Stream interface {
	XORKeyStream(dst, src []byte)
	SetCounter(counter uint64)
	Seek(offset uint64)
}

// Variant is one key size, nonce size and round count of a family.
// CounterBits is the width of its block counter, 32 or 64: with 32 the
// stream ends at block 2^32, with 64 Seek's byte offset ends first.
type Variant struct {
	Name        string
	KeySize     int
	NonceSize   int
	Rounds      int
	CounterBits int
}

// Family describes a cipher package to the suites.
type Family struct {
	// Name prefixes the package's panic messages ("chacha20").
	Name string
	// New is the package's NewUnauthenticatedCipherWithRounds.
	New func(key, nonce []byte, rounds int) (Stream, error)
	// Variants are the variants the suites cover; the first is the plain
	// cipher (256-bit key, 20 rounds) the single-variant checks use.
	Variants []Variant
	// Kernels switches the package between its core's kernels; Active
	// must be the package's own Kernel.
	Kernels kerneltest.Switch
}

// ForEachKernel runs f once per kernel of the family's core, as
// kerneltest.ForEach does.
func (fam Family) ForEachKernel(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	kerneltest.ForEach(t, fam.Kernels, f)
}

// forEachKernelAndVariant runs f, on every kernel, for each variant with
// a random key and nonce of its sizes.
func (fam Family) forEachKernelAndVariant(t *testing.T, r *rand.Rand, f func(t *testing.T, v Variant, key, nonce []byte)) {
	t.Helper()
	fam.ForEachKernel(t, func(t *testing.T) {
		for _, v := range fam.Variants {
			f(t, v, testutil.Bytes(r, v.KeySize), testutil.Bytes(r, v.NonceSize))
		}
	})
}

// must builds a cipher the test expects to be valid.
func (fam Family) must(t testing.TB, key, nonce []byte, rounds int) Stream {
	t.Helper()
	c, err := fam.New(key, nonce, rounds)
	require.NoError(t, err)
	return c
}

// Constructor turns a package's NewUnauthenticatedCipherWithRounds into a
// Family's New (an error gives a nil Stream, not a nil pointer inside
// one).
func Constructor[C Stream](newWithRounds func(key, nonce []byte, rounds int) (C, error)) func(key, nonce []byte, rounds int) (Stream, error) {
	return func(key, nonce []byte, rounds int) (Stream, error) {
		c, err := newWithRounds(key, nonce, rounds)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

// Must turns a package's NewUnauthenticatedCipherWithRounds into a
// constructor for tests that expect the cipher to be valid, failing t
// otherwise.
func Must[C Stream](newWithRounds func(key, nonce []byte, rounds int) (C, error)) func(t testing.TB, key, nonce []byte, rounds int) C {
	return func(t testing.TB, key, nonce []byte, rounds int) C {
		t.Helper()
		c, err := newWithRounds(key, nonce, rounds)
		require.NoError(t, err)
		return c
	}
}

// Keystream returns n bytes of c's key stream from its current position.
func Keystream(c interface{ XORKeyStream(dst, src []byte) }, n int) []byte {
	b := make([]byte, n)
	c.XORKeyStream(b, b)
	return b
}

// XORInChunks XORs src into dst through c in consecutive calls whose
// lengths r picks (from 0 up to a few blocks, or 1/64 of a long src),
// ending with whatever is left; it must give the same bytes as one call.
func XORInChunks(r *rand.Rand, c interface{ XORKeyStream(dst, src []byte) }, dst, src []byte) {
	// Long streams get proportionally longer chunks, so multi-MiB vectors
	// stay quick under -race while every chunk still starts and ends
	// mid-block.
	maxChunk := max(3*BlockSize+2, len(src)/64)
	for len(src) > 0 {
		n := min(len(src), r.IntN(maxChunk))
		c.XORKeyStream(dst[:n], src[:n])
		dst, src = dst[n:], src[n:]
	}
}

// Iterations is full, or short under -short: the count of random cases a
// differential test runs.
func Iterations(full, short int) int {
	if testing.Short() {
		return short
	}
	return full
}

// ChunkedKeystream returns n bytes of c's key stream from its current
// position, XORed over a separate zero buffer in random chunks (see
// [XORInChunks]).
func ChunkedKeystream(r *rand.Rand, c interface{ XORKeyStream(dst, src []byte) }, n int) []byte {
	got := make([]byte, n)
	XORInChunks(r, c, got, make([]byte, n))
	return got
}
