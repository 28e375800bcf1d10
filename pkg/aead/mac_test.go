package aead

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/stretchr/testify/assert"
)

// TestTagsEqual checks the tag comparison Open relies on: equal tags
// match, and flipping any single bit of either makes them differ.
func TestTagsEqual(t *testing.T) {
	r := testutil.Rand(t)
	var a [TagSize]byte
	copy(a[:], testutil.Bytes(r, TagSize))
	b := a
	assert.True(t, tagsEqual(&a, &b))
	for i := range TagSize * 8 {
		c := b
		c[i/8] ^= 1 << (i % 8)
		assert.False(t, tagsEqual(&a, &c), "bit %d of the second", i)
		assert.False(t, tagsEqual(&c, &a), "bit %d of the first", i)
	}
}
