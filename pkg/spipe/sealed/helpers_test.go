package sealed_test

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/spipe"
	"github.com/spipe-dev/spipe/pkg/spipe/sealed"
)

// testKey is a fixed key, so failures reproduce.
func testKey(t testing.TB) *sealed.Secret {
	t.Helper()
	k, err := spipe.NewKey([]byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"))
	require.NoError(t, err)
	return sealed.Key(k)
}

// plaintext returns n bytes that differ from chunk to chunk.
func plaintext(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 1))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// seal seals pt with one Write and Close.
func seal(t testing.TB, s *sealed.Secret, pt []byte, opts *sealed.Options) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := sealed.NewWriter(&out, s, opts)
	require.NoError(t, err)
	_, err = w.Write(pt)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return out.Bytes()
}

// openAll opens file with a Reader, returning what it read and the error
// that ended it (nil at io.EOF).
func openAll(t testing.TB, s *sealed.Secret, file []byte, workers int) ([]byte, error) {
	t.Helper()
	r, err := sealed.NewReader(bytes.NewReader(file), s, &sealed.Options{Workers: workers})
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	_, err = io.Copy(&out, r)
	return append([]byte{}, out.Bytes()...), err
}

// openAt opens file with a ReaderAt and reads all of it.
func openAt(t testing.TB, s *sealed.Secret, file []byte) ([]byte, error) {
	t.Helper()
	r, err := sealed.NewReaderAt(bytes.NewReader(file), int64(len(file)), s, nil)
	if err != nil {
		return nil, err
	}
	out := make([]byte, r.Size())
	n, err := r.ReadAt(out, 0)
	if err == io.EOF && n == len(out) {
		err = nil
	}
	return out[:n], err
}
