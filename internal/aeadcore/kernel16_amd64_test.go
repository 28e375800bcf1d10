//go:build gc && !purego

package aeadcore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
)

// TestIFMAx16WholeRange holds the 16-block kernels to the reference on
// every length they are documented to take (241 to 1024 bytes), not only
// the 513 and up that dispatch gives them, so that the threshold can move
// without a new proof.
func TestIFMAx16WholeRange(t *testing.T) {
	if !hasIFMA {
		t.Skip("the CPU lacks AVX-512 IFMA or VBMI2")
	}
	r := testutil.Rand(t)
	// Besides the package's round counts, 4 and 24: the kernels split
	// their double rounds by count (asmgen/aead/skew.go), and these take
	// the shortest split and one with double rounds of each kind.
	for _, rounds := range append([]int{4, 24}, roundCounts...) {
		ref := reference{rounds}
		for n := 241; n <= 1024; n++ {
			s := chachaState(r)
			pt := at(r, n, r.IntN(64))
			ad := at(r, n%40, r.IntN(64))
			wantCT, wantTag := ref.chacha(t, s, pt, ad)
			ct := at(r, n, r.IntN(64))
			var tag [16]byte
			chachaPolyIFMAx16Seal(&s, rounds, ct, pt, ad, &tag)
			if !assert.Equal(t, wantCT, ct, "seal r%d n %d", rounds, n) ||
				!assert.Equal(t, wantTag, tag, "tag r%d n %d", rounds, n) {
				return
			}
			out := at(r, n, r.IntN(64))
			require.True(t, chachaPolyIFMAx16Open(&s, rounds, out, ct, ad, &tag), "open r%d n %d", rounds, n)
			if !assert.Equal(t, pt, out, "open r%d n %d", rounds, n) {
				return
			}
		}
	}
}
