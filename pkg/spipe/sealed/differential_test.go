package sealed_test

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/aead"
	"github.com/spipe-dev/spipe/pkg/spipe/sealed"
)

// writeIn seals pt writing it in pieces of random sizes (through ReadFrom
// when viaCopy, through ReadFromAt when viaAt), so chunk boundaries fall
// everywhere.
func writeIn(t *testing.T, rng *rand.Rand, s *sealed.Secret, pt []byte, opts *sealed.Options, viaCopy, viaAt bool) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := sealed.NewWriter(&out, s, opts)
	require.NoError(t, err)
	if viaAt {
		// A few bytes written first, then the rest read by the workers.
		k := rng.IntN(min(len(pt), opts.ChunkSize) + 1)
		_, err := w.Write(pt[:k])
		require.NoError(t, err)
		n, err := w.ReadFromAt(bytes.NewReader(pt[k:]), int64(len(pt)-k))
		require.NoError(t, err)
		require.Equal(t, int64(len(pt)-k), n)
	} else if viaCopy {
		// One byte at a time from the source now and then: ReadFrom
		// must fill chunks across short reads.
		src := io.Reader(bytes.NewReader(pt))
		if rng.IntN(2) == 0 {
			src = iotest.HalfReader(src)
		}
		n, err := io.Copy(w, src)
		require.NoError(t, err)
		require.Equal(t, int64(len(pt)), n)
	} else {
		for rest := pt; len(rest) > 0; {
			k := min(len(rest), 1+rng.IntN(3*opts.ChunkSize))
			n, err := w.Write(rest[:k])
			require.NoError(t, err)
			require.Equal(t, k, n)
			rest = rest[k:]
		}
	}
	require.NoError(t, w.Close())
	return out.Bytes()
}

// TestDifferential: the Writer (Write in random pieces, or ReadFrom),
// whatever its workers, writes one file per plaintext and salt; the
// Reader (Read in random pieces, or WriteTo, any workers) and the
// ReaderAt (random ranges) each give back the plaintext, on random sizes
// around chunk multiples, for every suite.
func TestDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 1))
	s := testKey(t)
	rounds := 60
	if testing.Short() {
		rounds = 15
	}
	for i := range rounds {
		cs := sealed.MinChunkSize << rng.IntN(3)
		var size int
		switch rng.IntN(3) {
		case 0:
			size = rng.IntN(8 * cs)
		case 1:
			size = cs * rng.IntN(6) // exact multiples, 0 included
		default:
			size = cs*rng.IntN(6) + rng.IntN(3) - 1 // one either side
		}
		size = max(size, 0)
		pt := plaintext(size, uint64(i))
		suite := aead.Suites()[rng.IntN(len(aead.Suites()))]
		salt := plaintext(32, uint64(1000+i))
		var files [][]byte
		for _, workers := range []int{1, 2, 5} {
			for _, via := range []int{0, 1, 2} {
				opts := sealed.WithRand(&sealed.Options{Suite: suite, ChunkSize: cs, Workers: workers}, bytes.NewReader(salt))
				files = append(files, writeIn(t, rng, s, pt, opts, via == 1, via == 2))
			}
		}
		for _, f := range files[1:] {
			require.Equal(t, files[0], f, "writers disagree: size %d chunk %d %s", size, cs, suite)
		}
		file := files[0]
		require.Equal(t, sealed.SealedSize(int64(size), cs), int64(len(file)))

		for _, workers := range []int{1, 3} {
			r, err := sealed.NewReader(bytes.NewReader(file), s, &sealed.Options{Workers: workers})
			require.NoError(t, err)
			var got []byte
			if rng.IntN(2) == 0 {
				var b bytes.Buffer
				_, err = r.WriteTo(&b)
				require.NoError(t, err)
				got = b.Bytes()
			} else {
				got, err = io.ReadAll(iotest.OneByteReader(io.LimitReader(r, int64(rng.IntN(2*cs)))))
				require.NoError(t, err)
				rest, err := io.ReadAll(r)
				require.NoError(t, err)
				got = append(got, rest...)
			}
			assert.True(t, bytes.Equal(pt, got), "Reader: size %d chunk %d workers %d", size, cs, workers)
		}

		ra, err := sealed.NewReaderAt(bytes.NewReader(file), int64(len(file)), s, &sealed.Options{Workers: 1 + rng.IntN(3)})
		require.NoError(t, err)
		require.Equal(t, int64(size), ra.Size())
		for range 20 {
			off := rng.IntN(size + 1)
			n := rng.IntN(size - off + cs + 1) // sometimes past the end
			buf := make([]byte, n)
			got, err := ra.ReadAt(buf, int64(off))
			want := min(n, size-off)
			require.Equal(t, want, got, "ReadAt(%d, %d) of %d", n, off, size)
			if got < n {
				assert.ErrorIs(t, err, io.EOF)
			} else {
				assert.NoError(t, err)
			}
			assert.True(t, bytes.Equal(pt[off:off+want], buf[:got]), "ReadAt(%d, %d)", n, off)
		}
		assert.NoError(t, iotest.TestReader(io.NewSectionReader(ra, 0, ra.Size()), pt))
		for range 5 {
			off := rng.IntN(size + 1)
			n := rng.IntN(size - off + cs + 1)
			var b bytes.Buffer
			got, err := ra.WriteRangeTo(&b, int64(off), int64(n))
			require.NoError(t, err)
			want := min(n, size-off)
			require.Equal(t, int64(want), got)
			assert.True(t, bytes.Equal(pt[off:off+want], b.Bytes()), "WriteRangeTo(%d, %d)", off, n)
		}
	}
}
