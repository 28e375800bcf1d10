//go:build !race

// The race detector makes sync.Pool drop items at random, so allocation
// counts mean something only without it; make test runs this file in its
// pure-Go pass, which has no -race.

package sealed_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/spipe/sealed"
)

// TestNoAllocationPerChunk: after a file's fixed set-up (header, keys,
// buffers), sealing, opening and reading at random allocate nothing per
// chunk: four times the chunks cost no more allocations.
func TestNoAllocationPerChunk(t *testing.T) {
	s := testKey(t)
	const cs = sealed.MinChunkSize
	count := func(chunks int) (sealAllocs, openAllocs, readAtAllocs float64) {
		pt := plaintext(chunks*cs, 1)
		file := seal(t, s, pt, &sealed.Options{ChunkSize: cs, Workers: 1})
		src := bytes.NewReader(pt)
		sealAllocs = testing.AllocsPerRun(5, func() {
			src.Reset(pt)
			w, _ := sealed.NewWriter(io.Discard, s, &sealed.Options{ChunkSize: cs, Workers: 1})
			io.Copy(w, src)
			w.Close()
		})
		in := bytes.NewReader(file)
		openAllocs = testing.AllocsPerRun(5, func() {
			in.Reset(file)
			r, _ := sealed.NewReader(in, s, &sealed.Options{Workers: 1})
			io.Copy(io.Discard, r)
		})
		ra, err := sealed.NewReaderAt(bytes.NewReader(file), int64(len(file)), s, nil)
		require.NoError(t, err)
		buf := make([]byte, len(pt)-100)
		readAtAllocs = testing.AllocsPerRun(5, func() { ra.ReadAt(buf, 50) })
		return
	}
	s1, o1, r1 := count(8)
	s4, o4, r4 := count(32)
	assert.Equal(t, s1, s4, "Writer allocations grow with the chunks")
	assert.Equal(t, o1, o4, "Reader allocations grow with the chunks")
	assert.Zero(t, r1, "ReadAt allocates")
	assert.Zero(t, r4, "ReadAt allocates")
}
