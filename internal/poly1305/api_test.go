package poly1305

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/stretchr/testify/assert"
)

// TestMACContract checks the x/crypto-shaped contract: Sum appends and can
// be repeated, Verify rejects a tag with any single bit flipped or the
// wrong length, Write after Sum or Verify panics, Size is TagSize.
func TestMACContract(t *testing.T) {
	r := testutil.Rand(t)
	key := randomKey(r)
	msg := testutil.Bytes(r, 1000)
	want := xcryptoSum(key, msg)

	m := New(key)
	m.Write(msg)
	assert.Equal(t, TagSize, m.Size())
	prefix := []byte("prefix")
	assert.Equal(t, append([]byte("prefix"), want[:]...), m.Sum(prefix))
	assert.Equal(t, want[:], m.Sum(nil), "second Sum")
	assert.True(t, m.Verify(want[:]))
	assert.False(t, m.Verify(want[:15]), "short tag")
	assert.False(t, m.Verify(append(want[:], 0)), "long tag")
	for bit := range 8 * TagSize {
		bad := want
		bad[bit/8] ^= 1 << (bit % 8)
		assert.False(t, m.Verify(bad[:]), "bit %d flipped", bit)
		assert.False(t, Verify(&bad, msg, key), "one-shot, bit %d flipped", bit)
	}
	assert.True(t, Verify(&want, msg, key))
	assert.PanicsWithValue(t, "poly1305: write to MAC after Sum or Verify", func() { m.Write([]byte{1}) })

	v := New(key)
	v.Write(msg)
	v.Verify(want[:])
	assert.Panics(t, func() { v.Write(nil) }, "Write after Verify")
}
