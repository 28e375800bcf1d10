package frame

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/nacl/secretbox"

	"github.com/spipe-dev/spipe/pkg/aead"
)

// xcryptoFrame builds frame counter from docs/PROTOCOL.md section 4 with
// x/crypto's constructions: the inner plaintext is data || type || zeros,
// the header its 3-byte length; the AEAD suites authenticate the header as
// additional data under nonce LE64(counter) || zeros, the secretbox suite
// takes nonce LE64(counter) || header || zeros. Reduced-round suites have
// no x/crypto counterpart; the transcript vectors cover them.
func xcryptoFrame(t *testing.T, suite aead.Suite, key []byte, counter uint64, typ Type, data []byte, padTo int) []byte {
	n := len(data) + 1
	if padTo > 0 {
		n = (n + padTo - 1) / padTo * padTo
	}
	inner := make([]byte, n)
	copy(inner, data)
	inner[len(data)] = byte(typ)
	header := []byte{byte(n >> 16), byte(n >> 8), byte(n)}
	switch suite {
	case aead.ChaCha20Poly1305, aead.XChaCha20Poly1305:
		newAEAD := chacha20poly1305.New
		if suite == aead.XChaCha20Poly1305 {
			newAEAD = chacha20poly1305.NewX
		}
		a, err := newAEAD(key)
		require.NoError(t, err)
		nonce := make([]byte, a.NonceSize())
		binary.LittleEndian.PutUint64(nonce, counter)
		return a.Seal(header, nonce, inner, header)
	case aead.XSalsa20Poly1305:
		var nonce [24]byte
		binary.LittleEndian.PutUint64(nonce[:8], counter)
		copy(nonce[8:], header)
		return secretbox.Seal(header, inner, &nonce, (*[32]byte)(key))
	}
	return nil
}

func TestFramesMatchXCrypto(t *testing.T) {
	for _, suite := range []aead.Suite{aead.ChaCha20Poly1305, aead.XChaCha20Poly1305, aead.XSalsa20Poly1305} {
		f, key := newTestCipher(t, suite)
		for _, n := range testLengths {
			for _, pad := range testPads {
				counter := uint64(n)<<20 | uint64(pad)
				data := make([]byte, n)
				for i := range data {
					data[i] = byte(i*31 + n)
				}
				want := xcryptoFrame(t, suite, key, counter, Data, data, pad)
				assert.Equal(t, want, f.Seal(nil, counter, Data, data, pad), "%s n=%d pad=%d", suite, n, pad)
				typ, got, err := f.Open(nil, want, counter)
				require.NoError(t, err)
				assert.Equal(t, Data, typ)
				assert.Equal(t, data, got)
			}
		}
		for _, typ := range []Type{CloseWrite, Keepalive} {
			want := xcryptoFrame(t, suite, key, 77, typ, nil, 32)
			assert.Equal(t, want, f.Seal(nil, 77, typ, nil, 32), "%s %s", suite, typ)
		}
	}
}
