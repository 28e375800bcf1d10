package keyring

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/spipe"
)

func TestGenerate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k")
	key, err := Generate(path, false)
	require.NoError(t, err)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Regexp(t, `^[0-9a-f]{64}\n$`, string(b))
	// The key returned is the file's, hashed byte for byte as any reader
	// of the file derives it.
	fromFile, err := spipe.NewKey(b)
	require.NoError(t, err)
	assert.Equal(t, fromFile.Fingerprint(), key.Fingerprint())

	_, err = Generate(path, false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exists (use --force to overwrite it)")
	again, _ := os.ReadFile(path)
	assert.Equal(t, b, again)

	_, err = Generate(path, true)
	require.NoError(t, err)
	forced, _ := os.ReadFile(path)
	assert.NotEqual(t, b, forced)
	entries, _ := os.ReadDir(filepath.Dir(path))
	assert.Len(t, entries, 1, "temporary files left behind")
}

// TestGenerateMakesParents: the README's first command on a fresh account,
// where ~/.spipe does not exist yet.
func TestGenerateMakesParents(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ".spipe", "sub", "key")
	_, err := Generate(path, false)
	require.NoError(t, err)
	for _, dir := range []string{filepath.Join(home, ".spipe"), filepath.Join(home, ".spipe", "sub")} {
		fi, err := os.Stat(dir)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), dir)
	}
	assert.FileExists(t, path)

	// A parent that is a file: one line naming the key file.
	blocker := filepath.Join(home, "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))
	_, err = Generate(filepath.Join(blocker, "key"), false)
	assert.EqualError(t, err, "spipe: key file "+filepath.Join(blocker, "key")+": not a directory")
}

func TestGenerateTo(t *testing.T) {
	var out bytes.Buffer
	key, err := GenerateTo(&out)
	require.NoError(t, err)
	assert.Regexp(t, `^[0-9a-f]{64}\n$`, out.String())
	fromText, err := spipe.NewKey(out.Bytes())
	require.NoError(t, err)
	assert.Equal(t, fromText.Fingerprint(), key.Fingerprint())
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	for name, tc := range map[string]struct {
		files []string
		msg   string
	}{
		"none":        {nil, "no key file given"},
		"missing":     {[]string{filepath.Join(dir, "nope")}, "key file " + filepath.Join(dir, "nope") + ": no such file"},
		"directory":   {[]string{dir}, "key file " + dir + ": is a directory"},
		"empty":       {[]string{empty}, "key file " + empty + " is empty (make a key with: spipe keygen FILE)"},
		"stdin twice": {[]string{"-", "-"}, "-k - given twice"},
		"stdin empty": {[]string{"-"}, "key on standard input is empty"},
	} {
		_, _, err := Load(tc.files, strings.NewReader(""), nil)
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), tc.msg, name)
		}
	}
}

func TestLoadWarnsAndReloads(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k")
	require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte("a"), 40), 0o640))
	stdinMaterial := bytes.Repeat([]byte("s"), 32)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))

	r, keys, err := Load([]string{path, Stdin}, bytes.NewReader(stdinMaterial), log)
	require.NoError(t, err)
	require.Len(t, keys, 2)
	want0, _ := spipe.NewKey(bytes.Repeat([]byte("a"), 40))
	wantStdin, _ := spipe.NewKey(stdinMaterial)
	assert.Equal(t, want0.Fingerprint(), keys[0].Fingerprint())
	assert.Equal(t, wantStdin.Fingerprint(), keys[1].Fingerprint())
	assert.Contains(t, logs.String(), `msg="key file is accessible by others; chmod 600 it" file=`+path+` mode=0640`)
	assert.NotContains(t, logs.String(), "aaaa", "key material in the log")

	require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte("b"), 40), 0o600))
	keys, err = r.Reload()
	require.NoError(t, err)
	want1, _ := spipe.NewKey(bytes.Repeat([]byte("b"), 40))
	assert.Equal(t, want1.Fingerprint(), keys[0].Fingerprint(), "reload did not read the new file")
	assert.Equal(t, wantStdin.Fingerprint(), keys[1].Fingerprint(), "the stdin key must survive a reload")

	require.NoError(t, os.Remove(path))
	_, err = r.Reload()
	assert.ErrorContains(t, err, "no such file")
}

// TestPermissionWarningOncePerFile: reloads do not repeat the warning
// about a file others can read; a file made private and then loosened
// again is reported again.
func TestPermissionWarningOncePerFile(t *testing.T) {
	dir := t.TempDir()
	loose, private := filepath.Join(dir, "loose"), filepath.Join(dir, "private")
	require.NoError(t, os.WriteFile(loose, bytes.Repeat([]byte("a"), 40), 0o644))
	require.NoError(t, os.WriteFile(private, bytes.Repeat([]byte("b"), 40), 0o600))
	var logs bytes.Buffer
	r, _, err := Load([]string{loose, private}, nil, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	for range 3 {
		_, err = r.Reload()
		require.NoError(t, err)
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "accessible by others"), logs.String())
	assert.Contains(t, logs.String(), "file="+loose)

	require.NoError(t, os.Chmod(loose, 0o600))
	_, err = r.Reload()
	require.NoError(t, err)
	require.NoError(t, os.Chmod(loose, 0o640))
	_, err = r.Reload()
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(logs.String(), "accessible by others"), logs.String())
	assert.NotContains(t, logs.String(), "file="+private)
}
