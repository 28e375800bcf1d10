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
	require.NoError(t, Generate(path, false))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Regexp(t, `^[0-9a-f]{64}\n$`, string(b))

	err = Generate(path, false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exists (use --force to overwrite it)")
	again, _ := os.ReadFile(path)
	assert.Equal(t, b, again)

	require.NoError(t, Generate(path, true))
	forced, _ := os.ReadFile(path)
	assert.NotEqual(t, b, forced)
	entries, _ := os.ReadDir(filepath.Dir(path))
	assert.Len(t, entries, 1, "temporary files left behind")
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short")
	require.NoError(t, os.WriteFile(short, []byte("31 bytes of key material.......")[:31], 0o600))
	for name, tc := range map[string]struct {
		files []string
		msg   string
	}{
		"none":        {nil, "no key file given"},
		"missing":     {[]string{filepath.Join(dir, "nope")}, "key file " + filepath.Join(dir, "nope") + ": no such file"},
		"directory":   {[]string{dir}, "key file " + dir + ": is a directory"},
		"short":       {[]string{short}, "key file " + short + " is too short"},
		"stdin twice": {[]string{"-", "-"}, "-k - given twice"},
		"stdin short": {[]string{"-"}, "key on standard input is too short"},
	} {
		_, _, err := Load(tc.files, strings.NewReader("short"), nil)
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
