package spipe

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/hkdf"
)

// TestWireMatchesProtocolDoc records a session without forward secrecy and
// re-derives everything on the wire from the key file content alone,
// following docs/PROTOCOL.md with independent primitives (std HMAC and
// SHA-256, x/crypto HKDF and ChaCha20-Poly1305).
func TestWireMatchesProtocolDoc(t *testing.T) {
	material := []byte("a key file of any content, at least 32 bytes long\n")
	key, err := NewKey(material)
	require.NoError(t, err)
	ccfg := &Config{Keys: []*Key{key}, DisableForwardSecrecy: true, MaxPayload: 4096}
	scfg := &Config{Keys: []*Key{key}, Suites: []Suite{ChaCha20Poly1305, XSalsa20Poly1305}}
	var rec recorder
	cli, srv := proxyPair(t, ccfg, scfg, rec.hook)
	cerr, serr := runHandshakes(t, cli, srv)
	require.NoError(t, cerr)
	require.NoError(t, serr)
	msg := []byte("first bytes from the server")
	go func() { srv.Write(msg); srv.CloseWrite() }()
	got, err := io.ReadAll(cli)
	require.NoError(t, err)
	require.Equal(t, msg, got)
	c1, s1, cf := rec.unit(c2s, 0), rec.unit(s2c, 0), rec.unit(c2s, 1)
	frame := rec.unit(s2c, 1)

	psk := sha256.Sum256(material)
	mac := func(key []byte, parts ...[]byte) []byte {
		m := hmac.New(sha256.New, key)
		for _, p := range parts {
			m.Write(p)
		}
		return m.Sum(nil)
	}

	// ClientHello: 106 bytes, fields as in section 2.1.
	require.Len(t, c1, 106)
	assert.Equal(t, []byte{1, 1, 0, 0}, c1[0:4], "version, type, flags (no key), no suite")
	assert.Equal(t, uint16(1<<1|1<<2), binary.BigEndian.Uint16(c1[4:6]), "default suites 1 and 2")
	assert.Equal(t, uint32(4096), binary.BigEndian.Uint32(c1[6:10]))
	assert.Equal(t, make([]byte, 32), c1[42:74], "no ephemeral key")
	assert.Equal(t, mac(psk[:], c1[:74]), c1[74:])

	// ServerHello.
	require.Len(t, s1, 106)
	assert.Equal(t, []byte{1, 2, 0, 1}, s1[0:4], "version, type, flags, chose ChaCha20-Poly1305")
	assert.Equal(t, uint32(DefaultMaxPayload), binary.BigEndian.Uint32(s1[6:10]))
	assert.NotEqual(t, c1[10:42], s1[10:42], "each side's nonce is its own")
	assert.Equal(t, mac(psk[:], c1, s1[:74]), s1[74:])

	// Key schedule (section 3) and ClientFinished.
	th := sha256.Sum256(append(append([]byte(nil), c1...), s1...))
	expand := func(label string) []byte {
		out := make([]byte, 32)
		_, err := io.ReadFull(hkdf.New(sha256.New, psk[:], th[:], []byte(label)), out)
		require.NoError(t, err)
		return out
	}
	require.Len(t, cf, 34)
	assert.Equal(t, []byte{1, 3}, cf[:2])
	assert.Equal(t, mac(expand("spipe/1 client finished"), th[:]), cf[2:])

	// The server's first frame (section 4): counter 0 under K_s2c.
	aead, err := chacha20poly1305.New(expand("spipe/1 server to client"))
	require.NoError(t, err)
	require.Equal(t, byte(FrameData), frame[0])
	n := int(frame[1])<<16 | int(frame[2])<<8 | int(frame[3])
	require.Equal(t, len(msg), n)
	pt, err := aead.Open(nil, make([]byte, 12), frame[4:], frame[:4])
	require.NoError(t, err)
	assert.Equal(t, msg, pt)

	// With the client's key it does not open: directions have their own keys.
	other, err := chacha20poly1305.New(expand("spipe/1 client to server"))
	require.NoError(t, err)
	_, err = other.Open(nil, make([]byte, 12), frame[4:], frame[:4])
	assert.Error(t, err)
}
