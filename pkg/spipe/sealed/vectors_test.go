package sealed_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/aead"
	"github.com/spipe-dev/spipe/pkg/spipe"
	"github.com/spipe-dev/spipe/pkg/spipe/sealed"
)

// The package against the published vectors of testdata/file-v1, which
// spec_test.go derives from docs/FILE.md without it.

// vectorSecret is the secret a vector names.
func vectorSecret(t *testing.T, keyFile []byte, passphrase string) *sealed.Secret {
	t.Helper()
	if passphrase != "" {
		s, err := sealed.Passphrase([]byte(passphrase))
		require.NoError(t, err)
		return s
	}
	k, err := spipe.NewKey(keyFile)
	require.NoError(t, err)
	return sealed.Key(k)
}

// TestImplementationMatchesVectors seals every published plaintext with
// the published salt and requires the published file byte for byte, then
// opens each file with the Reader (one worker and three) and the ReaderAt.
func TestImplementationMatchesVectors(t *testing.T) {
	names := []string{"passphrase"}
	for _, s := range specSuites {
		names = append(names, s.name)
	}
	for _, name := range names {
		var f vectorFile
		loadJSON(t, vectorFilePath(name), &f)
		require.NotEmpty(t, f.Files, name)
		for _, v := range f.Files {
			t.Run(v.Name, func(t *testing.T) {
				secret := vectorSecret(t, v.KeyFile, v.Passphrase)
				suite, err := aead.ParseSuite(v.Suite)
				require.NoError(t, err)
				require.Equal(t, v.SuiteID, int(suite))
				opts := &sealed.Options{Suite: suite, ChunkSize: v.ChunkSize, Workers: 2}
				if v.Argon2 != nil {
					opts.Argon2 = &sealed.Argon2Params{Time: v.Argon2.Time, MemoryKiB: v.Argon2.MemoryKiB, Threads: v.Argon2.Threads}
				}
				got := seal(t, secret, v.Plaintext, sealed.WithRand(opts, bytes.NewReader(v.Salt)))
				assert.Equal(t, []byte(v.File), got)

				for _, workers := range []int{1, 3} {
					pt, err := openAll(t, secret, v.File, workers)
					require.NoError(t, err)
					assert.Equal(t, []byte(v.Plaintext), pt)
				}
				pt, err := openAt(t, secret, v.File)
				require.NoError(t, err)
				assert.Equal(t, []byte(v.Plaintext), pt)
				if v.PassphraseNFC != "" {
					// The same text in its other form is the same secret.
					pt, err := openAll(t, vectorSecret(t, nil, v.PassphraseNFC), v.File, 1)
					require.NoError(t, err, "opened with the passphrase's NFC form")
					assert.Equal(t, []byte(v.Plaintext), pt)
				}
			})
		}
	}
}

// sentinels maps the error names of invalid.json to the package's.
var sentinels = map[string]error{
	"ErrNotSealed":          sealed.ErrNotSealed,
	"ErrUnsupportedVersion": sealed.ErrUnsupportedVersion,
	"ErrDamagedHeader":      sealed.ErrDamagedHeader,
	"ErrMalformedHeader":    sealed.ErrMalformedHeader,
	"ErrWrongKey":           sealed.ErrWrongKey,
	"ErrTampered":           sealed.ErrTampered,
	"ErrTruncated":          sealed.ErrTruncated,
	"ErrTrailingData":       sealed.ErrTrailingData,
}

// TestInvalidVectors opens every published invalid file with the Reader
// (one worker and three) and the ReaderAt, and requires the published
// error and failing chunk, and not one byte of plaintext from the failing
// chunk on.
func TestInvalidVectors(t *testing.T) {
	var f invalidFile
	loadJSON(t, vectorFilePath("invalid"), &f)
	require.NotEmpty(t, f.Cases)
	for _, c := range f.Cases {
		t.Run(c.Name, func(t *testing.T) {
			want := sentinels[c.Error]
			require.NotNil(t, want, "unknown error name %q", c.Error)
			secret := vectorSecret(t, c.KeyFile, c.Passphrase)
			for _, workers := range []int{1, 3} {
				pt, err := openAll(t, secret, c.File, workers)
				checkInvalid(t, err, want, c.Chunk, "stream, %d workers", workers)
				if c.Chunk != nil {
					// Only chunks before the failing one came out, each whole.
					assert.Equal(t, int(*c.Chunk)*specChunkSize, len(pt))
				}
			}
			_, err := sealed.NewReaderAt(bytes.NewReader(c.File), int64(len(c.File)), secret, nil)
			if err == nil {
				// The size and final chunk were fine: a chunk inside fails.
				_, err = openAt(t, secret, c.File)
			}
			checkInvalid(t, err, want, c.RandomAccessChunk, "random access")
		})
	}
}

func checkInvalid(t *testing.T, err, want error, chunk *uint64, how string, args ...any) {
	t.Helper()
	require.Error(t, err, append([]any{how}, args...)...)
	assert.ErrorIs(t, err, want, append([]any{how}, args...)...)
	var ce *sealed.ChunkError
	if chunk == nil {
		assert.False(t, errors.As(err, &ce), "a header failure names no chunk: %v", err)
		return
	}
	if assert.True(t, errors.As(err, &ce), "%v", err) {
		assert.Equal(t, *chunk, ce.Index, append([]any{how + ": %v"}, append(args, err)...)...)
	}
}
