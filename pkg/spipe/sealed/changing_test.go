package sealed_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/spipe/sealed"
)

// changingFile is a real file that another process changes while it is
// being read: on the reads' `after`-th call (Read or ReadAt, counted from
// when it is armed) it first truncates the file to `truncateTo` (if >= 0)
// and overwrites byte `flipAt` (if >= 0), on the file itself, so every
// later read, whichever goroutine makes it, sees the change.
type changingFile struct {
	f          *os.File
	mu         sync.Mutex
	armed      bool
	reads      int
	after      int
	truncateTo int64
	flipAt     int64
}

func newChangingFile(t *testing.T, content []byte) *changingFile {
	t.Helper()
	path := filepath.Join(t.TempDir(), "input")
	require.NoError(t, os.WriteFile(path, content, 0o600))
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return &changingFile{f: f, truncateTo: -1, flipAt: -1}
}

// arm makes the change happen on the n-th read from now.
func (c *changingFile) arm(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed, c.reads, c.after = true, 0, n
}

func (c *changingFile) tick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.armed {
		return
	}
	if c.reads++; c.reads != c.after {
		return
	}
	if c.truncateTo >= 0 {
		if err := c.f.Truncate(c.truncateTo); err != nil {
			panic(err)
		}
	}
	if c.flipAt >= 0 {
		var b [1]byte
		if _, err := c.f.ReadAt(b[:], c.flipAt); err != nil {
			panic(err)
		}
		b[0] ^= 0x80
		if _, err := c.f.WriteAt(b[:], c.flipAt); err != nil {
			panic(err)
		}
	}
}

func (c *changingFile) ReadAt(p []byte, off int64) (int, error) {
	c.tick()
	return c.f.ReadAt(p, off)
}

func (c *changingFile) Read(p []byte) (int, error) {
	c.tick()
	return c.f.Read(p)
}

// TestSealInputShrinks: a plaintext file cut short while ReadFromAt seals
// it, wherever the cut falls (in a chunk a worker reads, or in the last
// piece, which the Writer reads itself), fails the read and the Close
// after it (the tool calls Close to stop the workers), and what was
// written is no whole file: it opens only to a prefix of the plaintext,
// then ErrTruncated.
func TestSealInputShrinks(t *testing.T) {
	const cs = sealed.MinChunkSize
	s := testKey(t)
	size := 40*cs + 100
	pt := plaintext(size, 3)
	cuts := map[string]int64{"mid-file": int64(size / 2), "in-the-last-piece": int64(size - 10)}
	for name, cut := range cuts {
		for _, workers := range []int{1, 3} {
			src := newChangingFile(t, pt)
			src.truncateTo = cut
			src.arm(2)
			var out bytes.Buffer
			w, err := sealed.NewWriter(&out, s, &sealed.Options{ChunkSize: cs, Workers: workers})
			require.NoError(t, err)
			_, err = w.ReadFromAt(src, int64(size))
			require.ErrorIs(t, err, io.ErrUnexpectedEOF, "%s, %d workers", name, workers)
			require.Error(t, w.Close(), "%s, %d workers: Close sealed a final chunk after the source failed", name, workers)
			got, err := openAll(t, s, out.Bytes(), 1)
			assert.ErrorIs(t, err, sealed.ErrTruncated, "%s, %d workers: the output opened as a whole file", name, workers)
			assert.True(t, bytes.HasPrefix(pt, got), "%s, %d workers", name, workers)
		}
	}
}

// TestSealStreamSourceFails: a stream that fails mid-way (not io.EOF)
// through io.Copy ends the Writer the same way.
func TestSealStreamSourceFails(t *testing.T) {
	const cs = sealed.MinChunkSize
	s := testKey(t)
	pt := plaintext(10*cs+100, 5)
	failure := errors.New("the disk went away")
	for _, k := range []int{0, cs / 2, 3 * cs, len(pt)} {
		for _, workers := range []int{1, 3} {
			var out bytes.Buffer
			w, err := sealed.NewWriter(&out, s, &sealed.Options{ChunkSize: cs, Workers: workers})
			require.NoError(t, err)
			_, err = io.Copy(w, io.MultiReader(bytes.NewReader(pt[:k]), iotest.ErrReader(failure)))
			require.ErrorIs(t, err, failure)
			require.ErrorIs(t, w.Close(), failure, "after %d bytes, %d workers", k, workers)
			_, err = w.Write([]byte{1})
			require.Error(t, err, "a Writer whose source failed took more plaintext")
			got, err := openAll(t, s, out.Bytes(), 1)
			assert.ErrorIs(t, err, sealed.ErrTruncated, "after %d bytes, %d workers: the output opened as a whole file", k, workers)
			assert.True(t, bytes.HasPrefix(pt, got))
		}
	}
}

// TestOpenInputChanges: a sealed file cut short, or with a byte changed,
// while a Reader or a ReaderAt's WriteRangeTo opens it fails at the chunk
// the change reached, having given only the whole authentic chunks before
// it: a prefix of the plaintext that ends on a chunk boundary. A
// random-access reader knows the file's size, so a cut is ErrTruncated
// ("the file shrank while open"); a stream reader sees a short chunk
// where the file now ends, which it cannot tell from damage (section 5.3
// of docs/FILE.md).
func TestOpenInputChanges(t *testing.T) {
	const cs = sealed.MinChunkSize
	s := testKey(t)
	pt := plaintext(40*cs+100, 4)
	file := seal(t, s, pt, &sealed.Options{ChunkSize: cs})
	half := int64(len(file) / 2)
	cut := []error{sealed.ErrTruncated, sealed.ErrTampered}
	changes := []struct {
		name         string
		truncateTo   int64
		flipAt       int64
		wantAt       error
		wantStreamIn []error
	}{
		{"cut-mid-file", half, -1, sealed.ErrTruncated, cut},
		{"cut-in-the-final-chunk", int64(len(file) - 10), -1, sealed.ErrTruncated, cut},
		{"byte-changed", -1, half, sealed.ErrTampered, []error{sealed.ErrTampered}},
	}
	check := func(t *testing.T, what string, got []byte, err error, want []error) {
		t.Helper()
		var ce *sealed.ChunkError
		require.ErrorAs(t, err, &ce, what)
		found := false
		for _, w := range want {
			found = found || errors.Is(err, w)
		}
		assert.True(t, found, "%s: %v is none of %v", what, err, want)
		assert.True(t, bytes.HasPrefix(pt, got), "%s returned bytes that are not the plaintext's", what)
		assert.Equal(t, int(ce.Index)*cs, len(got), "%s did not return exactly the chunks before the failing one", what)
	}
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			for _, workers := range []int{1, 3} {
				src := newChangingFile(t, file)
				src.truncateTo, src.flipAt = c.truncateTo, c.flipAt
				ra, err := sealed.NewReaderAt(src, int64(len(file)), s, &sealed.Options{Workers: workers})
				require.NoError(t, err)
				src.arm(2)
				var out bytes.Buffer
				_, err = ra.WriteRangeTo(&out, 0, ra.Size())
				check(t, "WriteRangeTo", out.Bytes(), err, []error{c.wantAt})

				src = newChangingFile(t, file)
				src.truncateTo, src.flipAt = c.truncateTo, c.flipAt
				src.arm(3) // the header is the first read
				r, err := sealed.NewReader(src, s, &sealed.Options{Workers: workers})
				require.NoError(t, err)
				out.Reset()
				_, err = io.Copy(&out, r)
				check(t, "Reader", out.Bytes(), err, c.wantStreamIn)
			}
		})
	}
}
