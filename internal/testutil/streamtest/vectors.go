package streamtest

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// XORBothWays runs src through a cipher from newCipher, positioned by
// position, in one call and in random chunks; both results must be equal,
// and the first is returned for checking.
func XORBothWays[C Stream](t *testing.T, newCipher func() C, position func(C), src []byte) []byte {
	t.Helper()
	c := newCipher()
	position(c)
	got := make([]byte, len(src))
	c.XORKeyStream(got, src)

	c = newCipher()
	position(c)
	chunked := make([]byte, len(src))
	XORInChunks(testutil.Rand(t), c, chunked, src)
	require.Equal(t, got, chunked, "one call and chunks differ")
	return got
}

// CheckXOR runs src through a cipher from newCipher, positioned by
// position, in one call and in random chunks, and compares each with want.
func CheckXOR[C Stream](t *testing.T, id string, newCipher func() C, position func(C), src, want []byte) {
	t.Helper()
	c := newCipher()
	position(c)
	got := make([]byte, len(src))
	c.XORKeyStream(got, src)
	assert.Equal(t, want, got, "%s: one call", id)

	c = newCipher()
	position(c)
	got = make([]byte, len(src))
	XORInChunks(testutil.Rand(t), c, got, src)
	assert.Equal(t, want, got, "%s: in chunks", id)
}

// AtCounter positions a cipher at the start of block counter.
func AtCounter[C Stream](counter uint64) func(C) {
	return func(c C) { c.SetCounter(counter) }
}

// CheckKeystreamCase checks the case's slice of key stream from ciphers
// mustCipher builds (failing t if it cannot) with the case's key, nonce
// and rounds, reaching it two
// ways: Seek to its first byte, and SetCounter to its block followed by
// discarding the bytes before it; each in one call and in chunks.
func CheckKeystreamCase[C Stream](t *testing.T, c testutil.KeystreamCase, mustCipher func(t testing.TB, key, nonce []byte, rounds int) C) {
	t.Helper()
	fresh := func() C { return mustCipher(t, c.Key, c.Nonce, c.Rounds) }
	start := c.Start()
	zeros := make([]byte, len(c.Keystream))
	CheckXOR(t, c.ID+" (Seek)", fresh, func(s C) { s.Seek(start) }, zeros, c.Keystream)
	CheckXOR(t, c.ID+" (SetCounter+discard)", fresh, func(s C) {
		s.SetCounter(start / BlockSize)
		Keystream(s, int(start%BlockSize))
	}, zeros, c.Keystream)
}
