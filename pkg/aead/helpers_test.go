package aead

import (
	"crypto/cipher"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/aeadcore"
	"github.com/spipe-dev/spipe/internal/chachacore"
	"github.com/spipe-dev/spipe/internal/salsacore"
	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
)

// forEachKernel runs f once per kernel this CPU supports for the cipher
// family of suite (kerneltest.ForEach), so the vectors cover every code
// path (kernels added later are picked up automatically): first, where
// the CPU has them, internal/aeadcore's one-call kernels for short
// messages beside the best core kernel ("aead+" that kernel's name), then
// each core kernel with them switched off, which is every path longer
// messages and other CPUs take.
func forEachKernel(t *testing.T, suite Suite, f func(t *testing.T)) {
	t.Helper()
	kerneltest.ForEach(t, kernelSwitch(suite), f)
}

// kernelSwitch is forEachKernel's switch for suite.
func kernelSwitch(suite Suite) kerneltest.Switch {
	core := kerneltest.Switch{Kernels: chachacore.Kernels, Use: chachacore.UseKernel, Active: chachacore.Kernel}
	if suite.Secretbox() {
		core = kerneltest.Switch{Kernels: salsacore.Kernels, Use: salsacore.UseKernel, Active: salsacore.Kernel}
	}
	return withAEADCore(core)
}

// withAEADCore returns the switch over core's kernels with aeadcore's
// kernels off and, listed first, the best of them with aeadcore's on.
func withAEADCore(core kerneltest.Switch) kerneltest.Switch {
	fused := func() string { return "aead+" + core.Kernels()[0] }
	on := aeadcore.Kernels()[0] != "generic"
	return kerneltest.Switch{
		Kernels: func() []string {
			if on {
				return append([]string{fused()}, core.Kernels()...)
			}
			return core.Kernels()
		},
		Use: func(name string) (func(), error) {
			aeadKernel, coreKernel := "generic", name
			if on && name == fused() {
				aeadKernel, coreKernel = aeadcore.Kernels()[0], core.Kernels()[0]
			}
			r1, err := aeadcore.UseKernel(aeadKernel)
			if err != nil {
				return nil, err
			}
			r2, err := core.Use(coreKernel)
			if err != nil {
				r1()
				return nil, err
			}
			return func() { r2(); r1() }, nil
		},
		Active: func() string {
			if aeadcore.Kernel() != "generic" {
				return "aead+" + core.Active()
			}
			return core.Active()
		},
	}
}

// aeadSuites and secretboxSuites split Suites() by constructor.
func aeadSuites() []Suite      { return filterSuites(false) }
func secretboxSuites() []Suite { return filterSuites(true) }

func filterSuites(secretbox bool) []Suite {
	var out []Suite
	for _, s := range Suites() {
		if s.Secretbox() == secretbox {
			out = append(out, s)
		}
	}
	return out
}

// mustNew returns the AEAD of suite for key, failing the test on error.
func mustNew(t testing.TB, suite Suite, key []byte) cipher.AEAD {
	t.Helper()
	a, err := New(suite, key)
	require.NoError(t, err)
	return a
}

// mustSecretbox returns the secretbox of suite for key, failing the test
// on error.
func mustSecretbox(t testing.TB, suite Suite, key []byte) *Secretbox {
	t.Helper()
	b, err := NewSecretbox(suite, key)
	require.NoError(t, err)
	return b
}

// sealOpener is the shape the tests that run over every suite use: a
// cipher.AEAD, or a Secretbox through boxAdapter.
type sealOpener interface {
	NonceSize() int
	Seal(dst, nonce, plaintext, additionalData []byte) []byte
	Open(dst, nonce, ciphertext, additionalData []byte) ([]byte, error)
}

// boxAdapter gives a Secretbox the method shape of a cipher.AEAD, for
// tests only; it panics on additional data, which a secretbox cannot take.
type boxAdapter struct{ b *Secretbox }

func (boxAdapter) NonceSize() int { return NonceSizeX }

func (x boxAdapter) Seal(dst, nonce, plaintext, additionalData []byte) []byte {
	if len(additionalData) != 0 {
		panic("test: additional data given to a secretbox")
	}
	return x.b.Seal(dst, (*[NonceSizeX]byte)(nonce), plaintext)
}

func (x boxAdapter) Open(dst, nonce, box, additionalData []byte) ([]byte, error) {
	if len(additionalData) != 0 {
		panic("test: additional data given to a secretbox")
	}
	return x.b.Open(dst, (*[NonceSizeX]byte)(nonce), box)
}

// mustAny returns the construction of any suite, for tests that run over
// all of them.
func mustAny(t testing.TB, suite Suite, key []byte) sealOpener {
	t.Helper()
	if suite.Secretbox() {
		return boxAdapter{mustSecretbox(t, suite, key)}
	}
	return mustNew(t, suite, key)
}

// layout returns where, in the sealed output of an n-byte message under
// suite, the ciphertext and the tag start: ciphertext || tag for the
// AEADs, tag || ciphertext for a secretbox.
func layout(suite Suite, n int) (ctAt, tagAt int) {
	if suite.Secretbox() {
		return TagSize, 0
	}
	return 0, n
}

// assertBytes compares byte strings by content, so that an empty result
// and a nil one are the same message.
func assertBytes(t testing.TB, want, got []byte, msgAndArgs ...any) {
	t.Helper()
	if len(want) == 0 && len(got) == 0 {
		return
	}
	assert.Equal(t, want, got, msgAndArgs...)
}

// sentinel returns an empty slice whose capacity of n bytes is filled with
// a marker, to check after a failed Open that nothing was written to dst.
func sentinel(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 0xa5
	}
	return b[:0]
}

// untouched reports whether the capacity of a sentinel slice still holds
// only the marker.
func untouched(b []byte) bool {
	for _, c := range b[:cap(b)] {
		if c != 0xa5 {
			return false
		}
	}
	return true
}

// concat returns a fresh slice holding a followed by b.
func concat(a, b []byte) []byte {
	return append(append(make([]byte, 0, len(a)+len(b)), a...), b...)
}
