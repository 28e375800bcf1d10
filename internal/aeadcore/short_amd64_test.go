//go:build gc && !purego

package aeadcore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
)

// shortIFMA are the short IFMA kernels and the longest message each
// takes (from 1 byte).
var shortIFMA = []struct {
	name string
	max  int
	seal func(s *[16]uint32, rounds int, dst, src, ad []byte, tag *[16]byte)
	open func(s *[16]uint32, rounds int, dst, src, ad []byte, tag *[16]byte) bool
}{
	{"IFMAx4", 256, chachaPolyIFMAx4Seal, chachaPolyIFMAx4Open},
	{"IFMAx8", 512, chachaPolyIFMAx8Seal, chachaPolyIFMAx8Open},
}

// TestShortIFMAWholeRange holds the short IFMA kernels to the reference
// on every length they are documented to take, not only those dispatch
// gives them, so that the thresholds can move without a new proof.
func TestShortIFMAWholeRange(t *testing.T) {
	if !hasIFMA {
		t.Skip("the CPU lacks AVX-512 IFMA or VBMI2")
	}
	r := testutil.Rand(t)
	for _, k := range shortIFMA {
		t.Run(k.name, func(t *testing.T) {
			for _, rounds := range roundCounts {
				ref := reference{rounds}
				for _, adLen := range adLengths {
					for n := 1; n <= k.max; n++ {
						s := chachaState(r)
						pt := at(r, n, r.IntN(64))
						ad := at(r, adLen, r.IntN(64))
						wantCT, wantTag := ref.chacha(t, s, pt, ad)
						ct := at(r, n, r.IntN(64))
						var tag [16]byte
						k.seal(&s, rounds, ct, pt, ad, &tag)
						if !assert.Equal(t, wantCT, ct, "seal r%d ad %d n %d", rounds, adLen, n) ||
							!assert.Equal(t, wantTag, tag, "tag r%d ad %d n %d", rounds, adLen, n) {
							return
						}
						out := at(r, n, r.IntN(64))
						require.True(t, k.open(&s, rounds, out, ct, ad, &tag), "open r%d ad %d n %d", rounds, adLen, n)
						if !assert.Equal(t, pt, out, "open r%d ad %d n %d", rounds, adLen, n) {
							return
						}
					}
				}
			}
		})
	}
}
