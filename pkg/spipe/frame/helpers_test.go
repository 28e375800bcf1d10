package frame

import (
	"crypto/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/aead"
)

// frameSuites is every suite a frame can be sealed with.
var frameSuites = aead.Suites()

// newTestCipher returns a frame cipher of suite under a fresh random key,
// and the key.
func newTestCipher(t testing.TB, suite aead.Suite) (*Cipher, []byte) {
	t.Helper()
	key := make([]byte, aead.KeySize)
	_, err := rand.Read(key)
	require.NoError(t, err)
	f, err := NewCipher(suite, key)
	require.NoError(t, err)
	return f, key
}

// sealInner seals an arbitrary inner plaintext as frame counter, bypassing
// Seal's checks, so tests can make authentic frames that break the format.
func sealInner(f *Cipher, counter uint64, inner []byte) []byte {
	frame := make([]byte, HeaderSize+len(inner)+TagSize)
	put24(frame, len(inner))
	payload := frame[HeaderSize:]
	pt := payload[f.c.ctOff:][:len(inner)]
	copy(pt, inner)
	nonce, ad := f.setNonce(counter, frame[:HeaderSize])
	f.c.seal(payload, nonce, pt, ad)
	return frame
}
