package pidfile

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteLocksUntilRemoved(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spipe.pid")
	remove, err := Write(path)
	require.NoError(t, err)
	want := strconv.Itoa(os.Getpid()) + "\n"
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, want, string(b))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())

	// A second instance with the same file fails and leaves it alone.
	_, err = Write(path)
	require.ErrorIs(t, err, ErrLocked)
	assert.EqualError(t, err, "pidfile "+path+": in use by another running process (PID "+strconv.Itoa(os.Getpid())+")")
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, want, string(b))

	remove()
	assert.NoFileExists(t, path)
	remove, err = Write(path)
	require.NoError(t, err, "the lock outlived remove")
	remove()
}

// TestWriteTakesOverAStaleFile: a file left by a process that died (no
// lock held) is rewritten.
func TestWriteTakesOverAStaleFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spipe.pid")
	require.NoError(t, os.WriteFile(path, []byte("99999999999\nleftover"), 0o644))
	remove, err := Write(path)
	require.NoError(t, err)
	defer remove()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(os.Getpid())+"\n", string(b))
}

func TestWriteNamesAMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "no", "such")
	path := filepath.Join(dir, "spipe.pid")
	_, err := Write(path)
	assert.EqualError(t, err, "pidfile "+path+": directory "+dir+" does not exist")
}
