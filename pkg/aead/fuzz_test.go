package aead

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/nacl/secretbox"
)

// maxFuzzLen bounds each fuzzed input, because every one of its bits is
// flipped in turn.
const maxFuzzLen = 300

// FuzzTamper seals a message under a fuzzed suite, key, nonce and
// additional data, checks the round trip (out of place and in place), and
// then checks that every single-bit flip of the nonce, the ciphertext, the
// tag or the additional data makes Open fail and leave dst untouched.
func FuzzTamper(f *testing.F) {
	for i, s := range Suites() {
		f.Add(uint8(s), []byte{byte(i)}, []byte("nonce"), []byte("message"), []byte("header"))
		f.Add(uint8(s), []byte{}, []byte{}, []byte{}, []byte{})
		f.Add(uint8(s), make([]byte, 32), make([]byte, 24), make([]byte, 200), make([]byte, 17))
	}
	f.Fuzz(func(t *testing.T, suiteByte uint8, keySeed, nonceSeed, msg, ad []byte) {
		suites := Suites()
		suite := suites[int(suiteByte)%len(suites)]
		msg, ad = truncate(msg), truncate(ad)
		if suite.Secretbox() {
			ad = nil
		}
		var key [KeySize]byte
		copy(key[:], keySeed)
		a := mustAny(t, suite, key[:])
		nonce := make([]byte, a.NonceSize())
		copy(nonce, nonceSeed)

		box := a.Seal(nil, nonce, msg, ad)
		require.Len(t, box, len(msg)+TagSize)
		pt, err := a.Open(nil, nonce, box, ad)
		require.NoError(t, err)
		assertBytes(t, msg, pt)
		checkInPlaceRoundTrip(t, a, suite, nonce, msg, ad, box)

		dst := sentinel(len(box))
		mustFail := func(what string, i int) {
			pt, err := a.Open(dst, nonce, box, ad)
			if err == nil || pt != nil || !untouched(dst) {
				t.Fatalf("%s: Open accepted a flip of %s bit %d (err %v)", suite, what, i, err)
			}
		}
		for _, part := range []struct {
			name string
			b    []byte
		}{{"nonce", nonce}, {"box", box}, {"additional data", ad}} {
			for i := range 8 * len(part.b) {
				part.b[i/8] ^= 1 << (i % 8)
				mustFail(part.name, i)
				part.b[i/8] ^= 1 << (i % 8)
			}
		}
		// The flips were undone: the box opens again.
		pt, err = a.Open(nil, nonce, box, ad)
		require.NoError(t, err)
		assertBytes(t, msg, pt)
	})
}

func truncate(b []byte) []byte { return b[:min(len(b), maxFuzzLen)] }

// checkInPlaceRoundTrip seals and opens msg in the in-place layout of
// suite and checks both results against the out-of-place ones.
func checkInPlaceRoundTrip(t *testing.T, a sealOpener, suite Suite, nonce, msg, ad, box []byte) {
	t.Helper()
	buf := make([]byte, len(msg)+TagSize)
	off, _ := layout(suite, len(msg))
	copy(buf[off:], msg)
	require.Equal(t, box, a.Seal(buf[:0], nonce, buf[off:off+len(msg)], ad))
	pt, err := a.Open(buf[off:off], nonce, buf, ad)
	require.NoError(t, err)
	assertBytes(t, msg, pt)
}

// FuzzMatchesXCrypto seals fuzzed inputs with ours and x/crypto (ChaCha20-
// and XChaCha20-Poly1305, nacl/secretbox) and requires identical boxes, and
// that each side opens the other's.
func FuzzMatchesXCrypto(f *testing.F) {
	f.Add(uint8(0), []byte("key"), []byte("nonce"), []byte("message"), []byte("ad"))
	f.Add(uint8(1), []byte{}, []byte{}, make([]byte, 1000), []byte{})
	f.Add(uint8(2), []byte{1}, []byte{2}, make([]byte, 33), []byte{})
	f.Fuzz(func(t *testing.T, which uint8, keySeed, nonceSeed, msg, ad []byte) {
		var key [KeySize]byte
		copy(key[:], keySeed)
		var nonce [NonceSizeX]byte
		copy(nonce[:], nonceSeed)
		switch which % 3 {
		case 0, 1:
			suite, refNew := ChaCha20Poly1305, chacha20poly1305.New
			if which%3 == 1 {
				suite, refNew = XChaCha20Poly1305, chacha20poly1305.NewX
			}
			ours := mustNew(t, suite, key[:])
			ref, err := refNew(key[:])
			require.NoError(t, err)
			n := nonce[:ours.NonceSize()]
			box := ref.Seal(nil, n, msg, ad)
			require.Equal(t, box, ours.Seal(nil, n, msg, ad))
			pt, err := ours.Open(nil, n, box, ad)
			require.NoError(t, err)
			assertBytes(t, msg, pt)
		default:
			ours := mustSecretbox(t, XSalsa20Poly1305, key[:])
			box := secretbox.Seal(nil, msg, &nonce, &key)
			require.Equal(t, box, ours.Seal(nil, &nonce, msg))
			pt, err := ours.Open(nil, &nonce, box)
			require.NoError(t, err)
			assertBytes(t, msg, pt)
		}
	})
}
