package sealed_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/spipe/sealed"
)

// openers are the two ways to open a whole file, with options.
var openers = map[string]func(s *sealed.Secret, file []byte, opts *sealed.Options) error{
	"stream": func(s *sealed.Secret, file []byte, opts *sealed.Options) error {
		_, err := sealed.NewReader(bytes.NewReader(file), s, opts)
		return err
	},
	"random access": func(s *sealed.Secret, file []byte, opts *sealed.Options) error {
		_, err := sealed.NewReaderAt(bytes.NewReader(file), int64(len(file)), s, opts)
		return err
	},
}

// TestArgon2Ceiling: a passphrase file asking Argon2id for more than the
// opener's ceiling fails with ErrArgon2Ceiling as a header failure, and
// opens once the ceiling is raised; a zero field of the ceiling is the
// default's.
func TestArgon2Ceiling(t *testing.T) {
	pass, err := sealed.Passphrase([]byte("correct horse"))
	require.NoError(t, err)
	params := sealed.Argon2Params{Time: 2, MemoryKiB: sealed.MinArgon2MemoryKiB, Threads: 2}
	file := seal(t, pass, plaintext(3000, 2), &sealed.Options{ChunkSize: sealed.MinChunkSize, Argon2: &params})
	for name, open := range openers {
		for _, low := range []sealed.Argon2Params{
			{Time: 1},
			{MemoryKiB: sealed.MinArgon2MemoryKiB - 1},
			{Threads: 1},
		} {
			err := open(pass, file, &sealed.Options{Argon2Ceiling: &low})
			require.ErrorIs(t, err, sealed.ErrArgon2Ceiling, "%s, ceiling %+v", name, low)
			var ce *sealed.ChunkError
			assert.False(t, errors.As(err, &ce), "a header failure names no chunk")
			assert.Contains(t, err.Error(), "asks for 8 MiB, 2 passes, 2 lanes")
		}
		exact := params
		for _, opts := range []*sealed.Options{nil, {}, {Argon2Ceiling: &exact}, {Argon2Ceiling: &sealed.Argon2Params{Time: 2}}} {
			assert.NoError(t, open(pass, file, opts), "%s, %+v", name, opts)
		}
	}
}

// TestDefaultCeilingStopsAHostileHeader: a header at the format's limits
// (1 GiB, 16 passes, 16 lanes; checksum recomputed, as anyone can) is
// refused by default before Argon2id runs: the open allocates nothing
// near the gibibyte Argon2id would. A key given for it fails the kind
// check first, which costs nothing either.
func TestDefaultCeilingStopsAHostileHeader(t *testing.T) {
	pass, err := sealed.Passphrase([]byte("correct horse"))
	require.NoError(t, err)
	params := sealed.Argon2Params{Time: 1, MemoryKiB: sealed.MinArgon2MemoryKiB, Threads: 1}
	file := seal(t, pass, nil, &sealed.Options{Argon2: &params})
	binary.BigEndian.PutUint32(file[16:], sealed.MaxArgon2Time)
	binary.BigEndian.PutUint32(file[20:], sealed.MaxArgon2MemoryKiB)
	file[11] = sealed.MaxArgon2Threads
	sum := sha256.Sum256(file[:88])
	copy(file[88:96], sum[:8])
	_, err = sealed.ParseHeader(file)
	require.NoError(t, err, "the header is within the format's limits")

	for name, open := range openers {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := open(pass, file, nil)
		runtime.ReadMemStats(&after)
		require.ErrorIs(t, err, sealed.ErrArgon2Ceiling, name)
		assert.Contains(t, err.Error(), "asks for 1024 MiB, 16 passes, 16 lanes; this opener allows at most 256 MiB, 8 passes, 16 lanes")
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "%s: Argon2id ran", name)

		err = open(testKey(t), file, nil)
		assert.ErrorIs(t, err, sealed.ErrWrongKey, "%s: the kind is checked before the ceiling", name)
	}
}
