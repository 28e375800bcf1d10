//go:build gc && !purego

package aeadcore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
)

// TestSecretboxIFMAx16WholeRange holds the 16-block secretbox kernels to
// the reference on every length they are documented to take (272 to 1056
// bytes), not only those dispatch gives them, so that the threshold can
// move without a new proof.
func TestSecretboxIFMAx16WholeRange(t *testing.T) {
	if !hasIFMA {
		t.Skip("the CPU lacks AVX-512 IFMA or VBMI2")
	}
	r := testutil.Rand(t)
	for _, rounds := range []int{20, 12, 8} {
		ref := reference{rounds}
		for n := 272; n <= 1056; n++ {
			s := salsaState(r)
			pt := at(r, n, r.IntN(64))
			wantCT, wantTag := ref.secretbox(t, s, pt)
			ct := at(r, n, r.IntN(64))
			var tag [16]byte
			secretboxIFMAx16Seal(&s, rounds, ct, pt, &tag)
			if !assert.Equal(t, wantCT, ct, "seal r%d n %d", rounds, n) ||
				!assert.Equal(t, wantTag, tag, "tag r%d n %d", rounds, n) {
				return
			}
			out := at(r, n, r.IntN(64))
			require.True(t, secretboxIFMAx16Open(&s, rounds, out, ct, &tag), "open r%d n %d", rounds, n)
			if !assert.Equal(t, pt, out, "open r%d n %d", rounds, n) {
				return
			}
		}
	}
}
