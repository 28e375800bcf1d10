package aead

import (
	"crypto/cipher"
	"crypto/rand"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/nacl/secretbox"
)

// diffSizes covers empty, sub-block, block, secretbox's 32-byte boundary,
// multi-block and multi-chunk lengths.
var diffSizes = []int{0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 95, 96, 97, 127, 128, 129,
	255, 256, 257, 1000, 1024, chunkSize - 1, chunkSize, chunkSize + 1, chunkSize + 31,
	chunkSize + 33, 2*chunkSize + 100, 70000}

func randBytes(t testing.TB, n int) []byte {
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return b
}

// TestChaChaMatchesXCrypto seals random messages with ours and x/crypto's
// ChaCha20-Poly1305 and XChaCha20-Poly1305, and opens each one's output with
// the other.
func TestChaChaMatchesXCrypto(t *testing.T) {
	for _, tc := range []struct {
		name string
		ours func([]byte) (cipher.AEAD, error)
		ref  func([]byte) (cipher.AEAD, error)
	}{
		{"ChaCha20Poly1305", NewChaCha20Poly1305, chacha20poly1305.New},
		{"XChaCha20Poly1305", NewXChaCha20Poly1305, chacha20poly1305.NewX},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := randBytes(t, KeySize)
			ours, err := tc.ours(key)
			require.NoError(t, err)
			ref, err := tc.ref(key)
			require.NoError(t, err)
			require.Equal(t, ref.NonceSize(), ours.NonceSize())
			require.Equal(t, ref.Overhead(), ours.Overhead())
			for _, n := range diffSizes {
				for _, adLen := range []int{0, 1, 16, 17, 100} {
					nonce := randBytes(t, ours.NonceSize())
					msg := randBytes(t, n)
					ad := randBytes(t, adLen)
					want := ref.Seal(nil, nonce, msg, ad)
					got := ours.Seal(nil, nonce, msg, ad)
					require.Equal(t, want, got, "Seal len %d ad %d", n, adLen)
					pt, err := ours.Open(nil, nonce, want, ad)
					require.NoError(t, err)
					assertBytes(t, msg, pt)
					pt, err = ref.Open(nil, nonce, got, ad)
					require.NoError(t, err)
					assertBytes(t, msg, pt)
				}
			}
		})
	}
}

// TestSecretboxMatchesXCrypto checks that a box from either implementation
// opens with the other and that both seal identically.
func TestSecretboxMatchesXCrypto(t *testing.T) {
	key := randBytes(t, KeySize)
	ours, err := NewXSalsa20Poly1305(key)
	require.NoError(t, err)
	for _, n := range diffSizes {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			nonce := randBytes(t, NonceSizeX)
			msg := randBytes(t, n)
			want := secretbox.Seal(nil, msg, (*[24]byte)(nonce), (*[32]byte)(key))
			got := ours.Seal(nil, nonce, msg, nil)
			require.Equal(t, want, got)
			pt, err := ours.Open(nil, nonce, want, nil)
			require.NoError(t, err)
			assertBytes(t, msg, pt)
			pt, ok := secretbox.Open(nil, got, (*[24]byte)(nonce), (*[32]byte)(key))
			require.True(t, ok)
			assertBytes(t, msg, pt)
		})
	}
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
