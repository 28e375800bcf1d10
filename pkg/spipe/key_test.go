package spipe

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewKeyHashesMaterialLikeSpiped(t *testing.T) {
	material := []byte(strings.Repeat("any file content works, ", 3))
	k, err := NewKey(material)
	require.NoError(t, err)
	assert.Equal(t, sha256.Sum256(material), k.psk)

	_, err = NewKey(make([]byte, MinKeyMaterial-1))
	assert.ErrorIs(t, err, ErrShortKey)
	_, err = NewKey(make([]byte, MinKeyMaterial))
	assert.NoError(t, err)
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
	assert.True(t, k.Equal(want))

	short := filepath.Join(dir, "short")
	require.NoError(t, os.WriteFile(short, []byte("too short"), 0o600))
	_, err = LoadKeyFile(short)
	assert.ErrorIs(t, err, ErrShortKey)
	assert.Contains(t, err.Error(), short)

	_, err = LoadKeyFile(filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	_, err = ReadKey(strings.NewReader(strings.Repeat("x", maxKeyMaterial+1)))
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

func TestParseSuites(t *testing.T) {
	for _, s := range AllSuites {
		got, err := ParseSuite(strings.ToUpper(s.String()))
		require.NoError(t, err)
		assert.Equal(t, s, got)
	}
	list, err := ParseSuites("chacha20, xsalsa20-poly1305,chacha8")
	require.NoError(t, err)
	assert.Equal(t, []Suite{ChaCha20Poly1305, XSalsa20Poly1305, ChaCha8Poly1305}, list)
	_, err = ParseSuites("chacha20,chacha20-poly1305")
	assert.Error(t, err)
	_, err = ParseSuite("aes-gcm")
	assert.Error(t, err)
	assert.True(t, ChaCha8Poly1305.Reduced())
	assert.False(t, ChaCha20Poly1305.Reduced())
	for _, s := range DefaultSuites {
		assert.False(t, s.Reduced(), "default suites are full strength")
	}
}

func TestConfigValidate(t *testing.T) {
	k := newTestKey(t)
	bad := map[string]*Config{
		"nil":           nil,
		"no key":        {},
		"nil key":       {Keys: []*Key{nil}},
		"empty suites":  {Keys: []*Key{k}, Suites: []Suite{}},
		"unknown suite": {Keys: []*Key{k}, Suites: []Suite{9}},
		"dup suite":     {Keys: []*Key{k}, Suites: []Suite{1, 1}},
		"pfs conflict":  {Keys: []*Key{k}, DisableForwardSecrecy: true, RequireForwardSecrecy: true},
		"payload small": {Keys: []*Key{k}, MaxPayload: MinPayloadLimit - 1},
		"payload big":   {Keys: []*Key{k}, MaxPayload: MaxPayloadLimit + 1},
		"pad big":       {Keys: []*Key{k}, MaxPayload: 1024, PadTo: 1025},
		"pad negative":  {Keys: []*Key{k}, PadTo: -1},
	}
	for name, cfg := range bad {
		assert.Error(t, cfg.Validate(), name)
	}
	assert.NoError(t, (&Config{Keys: []*Key{k}}).Validate())
}
