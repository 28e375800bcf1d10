//go:build gc && !purego

package aeadcore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
)

// TestIFMAx4WholeRange holds the short IFMA kernels to the reference on
// every length they are documented to take (1 to 256 bytes), not only
// those dispatch gives them, so that the threshold can move without a
// new proof.
func TestIFMAx4WholeRange(t *testing.T) {
	if !hasIFMA {
		t.Skip("the CPU lacks AVX-512 IFMA or VBMI2")
	}
	r := testutil.Rand(t)
	for _, rounds := range roundCounts {
		ref := reference{rounds}
		for _, adLen := range adLengths {
			for n := 1; n <= 256; n++ {
				s := chachaState(r)
				pt := at(r, n, r.IntN(64))
				ad := at(r, adLen, r.IntN(64))
				wantCT, wantTag := ref.chacha(t, s, pt, ad)
				ct := at(r, n, r.IntN(64))
				var tag [16]byte
				chachaPolyIFMAx4Seal(&s, rounds, ct, pt, ad, &tag)
				if !assert.Equal(t, wantCT, ct, "seal r%d ad %d n %d", rounds, adLen, n) ||
					!assert.Equal(t, wantTag, tag, "tag r%d ad %d n %d", rounds, adLen, n) {
					return
				}
				out := at(r, n, r.IntN(64))
				require.True(t, chachaPolyIFMAx4Open(&s, rounds, out, ct, ad, &tag), "open r%d ad %d n %d", rounds, adLen, n)
				if !assert.Equal(t, pt, out, "open r%d ad %d n %d", rounds, adLen, n) {
					return
				}
			}
		}
	}
}
