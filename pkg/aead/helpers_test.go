package aead

import (
	"crypto/cipher"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/chachacore"
	"github.com/spipe-dev/spipe/internal/salsacore"
)

// isSecretbox reports whether suite is a secretbox (XSalsa20) construction.
func isSecretbox(suite Suite) bool {
	return suite == XSalsa20Poly1305 || suite == XSalsa12Poly1305
}

// forEachKernel runs f once per kernel this CPU supports for the cipher
// family of suite, so the vectors cover every code path (kernels added later
// are picked up automatically). Not parallel: the switch is process-global.
func forEachKernel(t *testing.T, suite Suite, f func(t *testing.T)) {
	t.Helper()
	kernels, use := chachacore.Kernels(), chachacore.UseKernel
	if isSecretbox(suite) {
		kernels, use = salsacore.Kernels(), salsacore.UseKernel
	}
	require.NotEmpty(t, kernels)
	for _, name := range kernels {
		t.Run(name, func(t *testing.T) {
			restore, err := use(name)
			require.NoError(t, err)
			defer restore()
			f(t)
		})
	}
}

// mustNew returns the AEAD of suite for key, failing the test on error.
func mustNew(t testing.TB, suite Suite, key []byte) cipher.AEAD {
	t.Helper()
	a, err := New(suite, key)
	require.NoError(t, err)
	return a
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
