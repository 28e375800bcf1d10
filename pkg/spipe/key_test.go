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

	"github.com/spipe-dev/spipe/pkg/aead"
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
	assert.Equal(t, want.psk, k.psk)

	short := filepath.Join(dir, "short")
	require.NoError(t, os.WriteFile(short, []byte("too short"), 0o600))
	_, err = LoadKeyFile(short)
	assert.ErrorIs(t, err, ErrShortKey)
	assert.Contains(t, err.Error(), short)

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
