package spipe

import (
	"crypto/sha256"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/aead"
)

func TestNewKeyHashesMaterialLikeSpiped(t *testing.T) {
	material := []byte(strings.Repeat("any file content works, ", 3))
	k, err := NewKey(material)
	require.NoError(t, err)
	assert.Equal(t, sha256.Sum256(material), k.psk)

	// Any non-empty material is a key, as with spiped: a 29-byte file
	// that spiped uses works unchanged.
	for _, n := range []int{1, 29, 32} {
		material := make([]byte, n)
		k, err := NewKey(material)
		require.NoError(t, err, n)
		assert.Equal(t, sha256.Sum256(material), k.psk, n)
	}
	_, err = NewKey(nil)
	assert.ErrorIs(t, err, ErrEmptyKey)
	_, err = NewKey([]byte{})
	assert.ErrorIs(t, err, ErrEmptyKey)
}

func TestLoadKeyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "key")
	material := []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n")
	require.NoError(t, os.WriteFile(path, material, 0o600))
	k, err := LoadKeyFile(path)
	require.NoError(t, err)
	want, err := NewKey(material)
	require.NoError(t, err)
	assert.Equal(t, want.psk, k.psk)

	short := filepath.Join(dir, "short")
	require.NoError(t, os.WriteFile(short, []byte("29 bytes, as spiped took it\n"), 0o600))
	k, err = LoadKeyFile(short)
	require.NoError(t, err)
	assert.Equal(t, sha256.Sum256([]byte("29 bytes, as spiped took it\n")), k.psk)

	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	_, err = LoadKeyFile(empty)
	assert.ErrorIs(t, err, ErrEmptyKey)
	assert.Contains(t, err.Error(), empty)

	_, err = LoadKeyFile(filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	huge := filepath.Join(dir, "huge")
	require.NoError(t, os.WriteFile(huge, make([]byte, maxKeyMaterial+1), 0o600))
	_, err = LoadKeyFile(huge)
	assert.ErrorContains(t, err, "larger than 1 MiB")
	_, err = NewKey(make([]byte, maxKeyMaterial+1))
	assert.Error(t, err)
}

func TestKeyNeverPrintsSecret(t *testing.T) {
	k := newTestKey(t)
	secret := fmt.Sprintf("%x", k.psk[:])
	for _, s := range []string{k.String(), fmt.Sprintf("%v", k), fmt.Sprintf("%#v", k), k.Fingerprint()} {
		assert.NotContains(t, s, secret)
		assert.NotContains(t, s, secret[:16])
	}
	assert.Len(t, k.Fingerprint(), 16)
	assert.NotEqual(t, k.Fingerprint(), newTestKey(t).Fingerprint())
}

func TestDefaultSuites(t *testing.T) {
	def := DefaultSuites()
	assert.Equal(t, []aead.Suite{aead.ChaCha20Poly1305, aead.XSalsa20Poly1305}, def)
	for _, s := range def {
		assert.False(t, s.Reduced(), "default suites are full strength")
	}
	def[0] = aead.ChaCha8Poly1305
	assert.Equal(t, aead.ChaCha20Poly1305, DefaultSuites()[0], "each call returns a fresh list")
}

func TestConfigValidate(t *testing.T) {
	k := newTestKey(t)
	bad := map[string]*Config{
		"nil":           nil,
		"no key":        {},
		"nil key":       {Keys: []*Key{nil}},
		"empty suites":  {Keys: []*Key{k}, Suites: []aead.Suite{}},
		"unknown suite": {Keys: []*Key{k}, Suites: []aead.Suite{9}},
		"dup suite":     {Keys: []*Key{k}, Suites: []aead.Suite{1, 1}},
		"pfs policy":    {Keys: []*Key{k}, ForwardSecrecy: ForwardSecrecyOff + 1},
		"long context":  {Keys: []*Key{k}, Context: strings.Repeat("c", 256)},
		"payload small": {Keys: []*Key{k}, MaxPayload: minPayload - 1},
		"payload big":   {Keys: []*Key{k}, MaxPayload: MaxPayloadLimit + 1},
		"pad big":       {Keys: []*Key{k}, MaxPayload: 1024, PadTo: 1025},
		"pad negative":  {Keys: []*Key{k}, PadTo: -1},
	}
	for name, cfg := range bad {
		assert.Error(t, cfg.Validate(), name)
	}
	assert.NoError(t, (&Config{Keys: []*Key{k}}).Validate())
}

// TestConfigRefusesKeysNotMadeByNewKey: a Config with no key, a nil key
// or a zero-value Key (which would work as an all-zero key at both ends)
// fails Validate, Dial and the handshake with ErrInvalidKey, wherever
// the bad key sits in the list.
func TestConfigRefusesKeysNotMadeByNewKey(t *testing.T) {
	k := newTestKey(t)
	for name, keys := range map[string][]*Key{
		"no key":              nil,
		"nil key":             {nil},
		"zero-value key":      {{}},
		"new(Key)":            {new(Key)},
		"zero key after good": {k, {}},
	} {
		cfg := &Config{Keys: keys}
		assert.ErrorIs(t, cfg.Validate(), ErrInvalidKey, name)
		_, err := Dial("tcp", "127.0.0.1:1", cfg)
		assert.ErrorIs(t, err, ErrInvalidKey, name)
		client, server := net.Pipe()
		assert.ErrorIs(t, Client(client, cfg).Handshake(), ErrInvalidKey, name)
		client.Close()
		server.Close()
	}
	assert.NoError(t, (&Config{Keys: []*Key{k, newTestKey(t)}}).Validate())
}
