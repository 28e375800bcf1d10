package keyring

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/spipe"
)

func TestWeakKeyReason(t *testing.T) {
	random := make([]byte, 32)
	_, err := rand.Read(random)
	require.NoError(t, err)
	hexKey := hex.EncodeToString(random)
	keys := map[string]bool{ // material: looks like a key
		hexKey + "\n":                         true,
		hexKey:                                true,
		strings.ToUpper(hexKey) + "\r\n":      true,
		hexKey + hexKey:                       true,
		string(random):                        true,
		string(random) + string(random):       true,
		"correct horse battery staple, again": false,
		hexKey[:40] + "\n":                    false, // hex, but only 160 bits
		strings.Repeat("0", 64) + "\n":        false,
		strings.Repeat("ab", 32):              false,
		string(make([]byte, 32)):              false,
		strings.Repeat("\x01\x02", 40):        false,
		string(random[:29]):                   false, // a short file spiped took: loads, and is weak
	}
	for material, ok := range keys {
		assert.Equal(t, ok, weakKeyReason([]byte(material)) == "", "%q", material)
	}
}

// TestWeakKeyWarning: loading a passphrase file warns once, naming the
// file and the fix, and never the material; a keygen key does not warn.
func TestWeakKeyWarning(t *testing.T) {
	dir := t.TempDir()
	weak := filepath.Join(dir, "passphrase")
	require.NoError(t, os.WriteFile(weak, []byte("my secret passphrase is long enough\n"), 0o600))
	good := filepath.Join(dir, "key")
	_, err := Generate(good, false)
	require.NoError(t, err)

	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	_, _, err = Load([]string{good}, nil, log)
	require.NoError(t, err)
	assert.Empty(t, logs.String(), "a keygen key loads silently")

	r, _, err := Load([]string{weak}, nil, log)
	require.NoError(t, err, "a weak key still loads: both ends may already use it")
	assert.Contains(t, logs.String(), "key file "+weak+" does not look like a key")
	assert.Contains(t, logs.String(), "spipe keygen")
	assert.NotContains(t, logs.String(), "passphrase is long")
	_, err = r.Reload()
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(logs.String(), "does not look like a key"), "a reload does not repeat the warning")
}

// TestShortKeyFileLoadsAndWarns: a key file under 32 bytes, which spiped
// takes, loads as the SHA-256 of its content (the same key spiped
// derives), with the weak-key warning naming why.
func TestShortKeyFileLoadsAndWarns(t *testing.T) {
	material := make([]byte, 29)
	_, err := rand.Read(material)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "pass.key")
	require.NoError(t, os.WriteFile(path, material, 0o600))
	var logs bytes.Buffer
	_, keys, err := Load([]string{path}, nil, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	want, err := spipe.NewKey(material)
	require.NoError(t, err)
	assert.Equal(t, want.Fingerprint(), keys[0].Fingerprint())
	assert.Contains(t, logs.String(), "key file "+path+" does not look like a key")
	assert.Contains(t, logs.String(), "fewer than 32 bytes")
}
