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

// TestDeriveKeysMatchesXCryptoHKDF recomputes the key schedule of
// docs/PROTOCOL.md with golang.org/x/crypto/hkdf.
func TestDeriveKeysMatchesXCryptoHKDF(t *testing.T) {
	psk := (*[32]byte)(randomBytes(t, 32))
	th := randomBytes(t, 32)
	for _, shared := range [][]byte{nil, randomBytes(t, 32)} {
		keys, err := deriveKeys(psk, shared, th)
		require.NoError(t, err)
		ikm := append(append([]byte(nil), psk[:]...), shared...)
		for label, got := range map[string][]byte{
			"spipe/1 client to server": keys.clientToServer,
			"spipe/1 server to client": keys.serverToClient,
			"spipe/1 client finished":  keys.finished,
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
	psk := (*[32]byte)(randomBytes(t, 32))
	transcript, body := randomBytes(t, helloSize), randomBytes(t, helloBody)
	var got [macSize]byte
	helloMAC(got[:], psk, transcript, body)
	m := hmac.New(sha256.New, psk[:])
	m.Write(append(append([]byte(nil), transcript...), body...))
	assert.Equal(t, m.Sum(nil), got[:])
}

// TestMatchClientKeyFindsEachKey: every position of the matching key is
// found, and a MAC under no key matches none.
func TestMatchClientKeyFindsEachKey(t *testing.T) {
	keys := []*Key{newTestKey(t), newTestKey(t), newTestKey(t), newTestKey(t)}
	body := randomBytes(t, helloBody)
	for i, k := range keys {
		var mac [macSize]byte
		helloMAC(mac[:], &k.psk, nil, body)
		psk, index, ok := matchClientKey(keys, body, mac[:])
		assert.True(t, ok)
		assert.Equal(t, i, index)
		assert.Equal(t, k.psk, psk)
	}
	_, _, ok := matchClientKey(keys, body, randomBytes(t, macSize))
	assert.False(t, ok)
	// The same key twice: the first match wins.
	dup := []*Key{keys[0], keys[1], keys[1]}
	var mac [macSize]byte
	helloMAC(mac[:], &keys[1].psk, nil, body)
	_, index, ok := matchClientKey(dup, body, mac[:])
	assert.True(t, ok)
	assert.Equal(t, 1, index)
}
