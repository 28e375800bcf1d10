package sealed_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/spipe/sealed"
)

func TestRoundTrip(t *testing.T) {
	const cs = sealed.MinChunkSize
	for _, n := range []int{0, 1, cs - 1, cs, cs + 1, 2 * cs, 3*cs + 7} {
		for _, workers := range []int{1, 3} {
			pt := plaintext(n, uint64(n))
			file := seal(t, testKey(t), pt, &sealed.Options{ChunkSize: cs, Workers: workers})
			assert.Equal(t, sealed.SealedSize(int64(n), cs), int64(len(file)), "n=%d", n)
			got, err := openAll(t, testKey(t), file, workers)
			require.NoError(t, err, "n=%d workers=%d", n, workers)
			assert.Equal(t, pt, got)
			got, err = openAt(t, testKey(t), file)
			require.NoError(t, err, "n=%d", n)
			assert.Equal(t, pt, got)
		}
	}
}
