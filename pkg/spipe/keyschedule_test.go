package spipe

import (
	"crypto/hmac"
	"crypto/sha256"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/hkdf"
)

// TestImportKeyMatchesXCryptoHKDF recomputes the key import of
// docs/PROTOCOL.md (HKDF-Expand of the PSK, info = label || len || context)
// with golang.org/x/crypto/hkdf.
func TestImportKeyMatchesXCryptoHKDF(t *testing.T) {
	psk := (*[32]byte)(randomBytes(t, 32))
	seen := map[[32]byte]string{}
	for _, context := range []string{"", "a", "db.example:5432 -> primary", string(make([]byte, 255))} {
		info := append([]byte("spipe/2 key import"), byte(len(context)))
		info = append(info, context...)
		want := make([]byte, 32)
		_, err := io.ReadFull(hkdf.Expand(sha256.New, psk[:], info), want)
		require.NoError(t, err)
		got := importKey(psk, context)
		assert.Equal(t, want, got[:], "context %q", context)
		_, dup := seen[got]
		assert.False(t, dup, "context %q imports the same key as %q", context, seen[got])
		seen[got] = context
	}
}

// TestDeriveKeysMatchesXCryptoHKDF recomputes the key schedule of
// docs/PROTOCOL.md with golang.org/x/crypto/hkdf.
func TestDeriveKeysMatchesXCryptoHKDF(t *testing.T) {
	ipsk := (*[32]byte)(randomBytes(t, 32))
	th := randomBytes(t, 32)
	for _, shared := range [][]byte{nil, randomBytes(t, 32)} {
		keys, err := deriveKeys(ipsk, shared, th)
		require.NoError(t, err)
		ikm := append(append([]byte(nil), ipsk[:]...), shared...)
		for label, got := range map[string][]byte{
			"spipe/2 client to server": keys.clientToServer,
			"spipe/2 server to client": keys.serverToClient,
			"spipe/2 client finished":  keys.finished,
		} {
			want := make([]byte, 32)
			_, err := io.ReadFull(hkdf.New(sha256.New, ikm, th, []byte(label)), want)
			require.NoError(t, err)
			assert.Equal(t, want, got, label)
		}
		assert.NotEqual(t, keys.clientToServer, keys.serverToClient)
	}
}

func TestHelloMACIsHMACOfTranscript(t *testing.T) {
	ipsk := (*[32]byte)(randomBytes(t, 32))
	transcript, body := randomBytes(t, helloSize), randomBytes(t, helloBody)
	var got [macSize]byte
	helloMAC(got[:], ipsk, transcript, body)
	m := hmac.New(sha256.New, ipsk[:])
	m.Write(append(append([]byte(nil), transcript...), body...))
	assert.Equal(t, m.Sum(nil), got[:])
}

// TestMatchClientKeyFindsEachKey: every position of the matching key is
// found, and a MAC under no key matches none.
func TestMatchClientKeyFindsEachKey(t *testing.T) {
	var keys [][32]byte
	for range 4 {
		keys = append(keys, [32]byte(randomBytes(t, 32)))
	}
	body := randomBytes(t, helloBody)
	for i := range keys {
		var mac [macSize]byte
		helloMAC(mac[:], &keys[i], nil, body)
		ipsk, index, ok := matchClientKey(keys, body, mac[:])
		assert.True(t, ok)
		assert.Equal(t, i, index)
		assert.Equal(t, keys[i], ipsk)
	}
	_, _, ok := matchClientKey(keys, body, randomBytes(t, macSize))
	assert.False(t, ok)
	// The same key twice: the first match wins.
	dup := [][32]byte{keys[0], keys[1], keys[1]}
	var mac [macSize]byte
	helloMAC(mac[:], &keys[1], nil, body)
	_, index, ok := matchClientKey(dup, body, mac[:])
	assert.True(t, ok)
	assert.Equal(t, 1, index)
}
