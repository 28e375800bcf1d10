package spipe_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/spipe"
)

// TestWriteKeyFile: the library's keygen writes what `spipe keygen` writes,
// and LoadKeyFile reads it back to the same key.
func TestWriteKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new", "key")
	k, err := spipe.WriteKeyFile(path, false)
	require.NoError(t, err)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o600), fi.Mode().Perm())
	dir, err := os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o700), dir.Mode().Perm())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Regexp(t, `^[0-9a-f]{64}\n$`, string(b))
	loaded, err := spipe.LoadKeyFile(path)
	require.NoError(t, err)
	assert.Equal(t, k.Fingerprint(), loaded.Fingerprint())

	_, err = spipe.WriteKeyFile(path, false)
	assert.ErrorIs(t, err, fs.ErrExist)
	assert.NotContains(t, err.Error(), string(b[:16]), "key material in an error")
	again, _ := os.ReadFile(path)
	assert.Equal(t, b, again, "an existing key file was changed without overwrite")

	k2, err := spipe.WriteKeyFile(path, true)
	require.NoError(t, err)
	assert.NotEqual(t, k.Fingerprint(), k2.Fingerprint())
	entries, _ := os.ReadDir(filepath.Dir(path))
	assert.Len(t, entries, 1, "temporary files left behind")
}

func TestGenerateKey(t *testing.T) {
	m1, k1 := spipe.GenerateKey()
	m2, k2 := spipe.GenerateKey()
	assert.Regexp(t, `^[0-9a-f]{64}\n$`, string(m1))
	assert.NotEqual(t, m1, m2)
	assert.NotEqual(t, k1.Fingerprint(), k2.Fingerprint())
	fromMaterial, err := spipe.NewKey(m1)
	require.NoError(t, err)
	assert.Equal(t, k1.Fingerprint(), fromMaterial.Fingerprint())
}
