package aead

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
)

// secretboxLens covers the short stack buffers and their ends (32, 96,
// 480, 992: the message bytes that fit after the Poly1305 key), the long
// path and several chunks.
var secretboxLens = []int{0, 1, 31, 32, 33, 95, 96, 97, 479, 480, 481, 991, 992, 993,
	1024, 2048, chunkSize + 991, chunkSize + 993, 2*chunkSize + 100}

// TestSecretboxInPlace seals with the message at buf[16:] into buf[:0] and
// opens the box at buf into buf[16:16], the documented in-place layout,
// and checks both against out-of-place operation.
func TestSecretboxInPlace(t *testing.T) {
	forEachSecretbox(t, func(r *rand.Rand, s Suite, b *Secretbox, n int, nonce *[NonceSizeX]byte) {
		msg := testutil.Bytes(r, n)
		want := b.Seal(nil, nonce, msg)

		buf := make([]byte, TagSize+n)
		copy(buf[TagSize:], msg)
		box := b.Seal(buf[:0], nonce, buf[TagSize:])
		require.Equal(t, want, box, "%s %d", s, n)
		require.Equal(t, &buf[0], &box[0], "%s %d: in-place Seal moved", s, n)

		pt, err := b.Open(box[TagSize:TagSize], nonce, box)
		require.NoError(t, err)
		assertBytes(t, msg, pt, "%s %d", s, n)
		if n > 0 {
			require.Equal(t, &buf[TagSize], &pt[0], "%s %d: in-place Open moved", s, n)
		}
	})
}

// forEachSecretbox runs f for each secretbox suite under a random key and
// each of secretboxLens with a random nonce.
func forEachSecretbox(t *testing.T, f func(r *rand.Rand, s Suite, b *Secretbox, n int, nonce *[NonceSizeX]byte)) {
	r := testutil.Rand(t)
	for _, s := range secretboxSuites() {
		b := mustSecretbox(t, s, testutil.Bytes(r, KeySize))
		for _, n := range secretboxLens {
			var nonce [NonceSizeX]byte
			copy(nonce[:], testutil.Bytes(r, NonceSizeX))
			f(r, s, b, n, &nonce)
		}
	}
}

// TestSecretboxOverlap checks that any overlap other than the in-place
// layout panics before a byte is written, and that output right beside
// the input is fine.
func TestSecretboxOverlap(t *testing.T) {
	r := testutil.Rand(t)
	b := mustSecretbox(t, XSalsa20Poly1305, testutil.Bytes(r, KeySize))
	var nonce [NonceSizeX]byte
	for _, n := range []int{1, 32, 100, 992, 2048} {
		msg := testutil.Bytes(r, n)
		box := b.Seal(nil, &nonce, msg)
		size := n + TagSize
		const off = 2 * TagSize
		buf := make([]byte, off+2*size+off)
		// Seal's output (size bytes) at off+shift, the message at off:
		// only shift -16 (the message at box[16:]) is allowed.
		for _, shift := range []int{-TagSize - 1, -TagSize + 1, -1, 0, 1, n - 1} {
			if shift <= -size || shift >= n {
				continue
			}
			fill(buf)
			copy(buf[off:], msg)
			before := bytes.Clone(buf)
			assert.PanicsWithValue(t, "aead: invalid buffer overlap", func() {
				b.Seal(buf[off+shift:off+shift], &nonce, buf[off:off+n])
			}, "Seal len %d shift %d", n, shift)
			assert.Equal(t, before, buf, "Seal len %d shift %d: wrote before panicking", n, shift)
		}
		// Open's output (n bytes) at off+shift, the box at off: only
		// shift 16 (the message over the ciphertext) is allowed; 0 puts it
		// over the tag.
		for _, shift := range []int{-1, 0, 1, TagSize - 1, TagSize + 1, size - 1} {
			if shift <= -n || shift >= size || shift == TagSize {
				continue
			}
			fill(buf)
			copy(buf[off:], box)
			before := bytes.Clone(buf)
			assert.PanicsWithValue(t, "aead: invalid buffer overlap", func() {
				_, _ = b.Open(buf[off+shift:off+shift], &nonce, buf[off:off+size])
			}, "Open len %d shift %d", n, shift)
			assert.Equal(t, before, buf, "Open len %d shift %d: wrote before panicking", n, shift)
		}

		// Right beside the input: fine.
		fill(buf)
		copy(buf[off:], msg)
		assert.Equal(t, box, b.Seal(buf[off+n:off+n], &nonce, buf[off:off+n]))
		copy(buf[off+n:], box)
		pt, err := b.Open(buf[off:off], &nonce, buf[off+n:off+n+size])
		require.NoError(t, err)
		assert.Equal(t, msg, pt)
	}
}

// TestSecretboxFailedOpen flips a bit of the nonce, the tag and the first
// and last ciphertext bytes, cuts and extends the box, and opens into a
// separate buffer and in place: Open must return ErrOpen and nil and leave
// dst's capacity and, in place, the box exactly as they were.
func TestSecretboxFailedOpen(t *testing.T) {
	forEachSecretbox(t, func(r *rand.Rand, s Suite, b *Secretbox, n int, nonce *[NonceSizeX]byte) {
		box := b.Seal(nil, nonce, testutil.Bytes(r, n))
		type tampered struct {
			nonce [NonceSizeX]byte
			box   []byte
		}
		badNonce := *nonce
		badNonce[r.IntN(NonceSizeX)] ^= 4
		cases := map[string]tampered{
			"nonce bit":    {badNonce, box},
			"tag bit":      {*nonce, flipped(box, r.IntN(TagSize))},
			"first ct bit": {*nonce, flipped(box, min(TagSize, len(box)-1))},
			"last ct bit":  {*nonce, flipped(box, len(box)-1)},
			"cut":          {*nonce, box[:len(box)-1]},
			"added byte":   {*nonce, append(bytes.Clone(box), 0)},
			"no tag":       {*nonce, box[:TagSize-1]},
		}
		for what, tc := range cases {
			name := fmt.Sprintf("%s len %d: %s", s, n, what)
			dst := sentinel(len(tc.box) + 64)
			pt, err := b.Open(dst, &tc.nonce, tc.box)
			assert.ErrorIs(t, err, ErrOpen, name)
			assert.Nil(t, pt, name)
			assert.True(t, untouched(dst), "%s: Open wrote to dst", name)

			inPlace := bytes.Clone(tc.box)
			if len(inPlace) >= TagSize {
				pt, err = b.Open(inPlace[TagSize:TagSize], &tc.nonce, inPlace)
				assert.ErrorIs(t, err, ErrOpen, name)
				assert.Nil(t, pt, name)
				assert.Equal(t, tc.box, inPlace, "%s: failed in-place Open changed the box", name)
			}
		}
	})
}

// flipped returns a copy of b with one bit of byte i flipped.
func flipped(b []byte, i int) []byte {
	b = bytes.Clone(b)
	b[i] ^= 0x10
	return b
}

// TestSecretboxAppend checks that Seal and Open append to dst, keeping
// the prefix and using spare capacity without writing past the result.
func TestSecretboxAppend(t *testing.T) {
	r := testutil.Rand(t)
	b := mustSecretbox(t, XSalsa20Poly1305, testutil.Bytes(r, KeySize))
	var nonce [NonceSizeX]byte
	for _, n := range []int{0, 5, 1000} {
		msg := testutil.Bytes(r, n)
		box := b.Seal(nil, &nonce, msg)
		for _, spare := range []int{0, n + TagSize + 7} {
			prefix := []byte("prefix")
			dst := append(make([]byte, 0, len(prefix)+spare), prefix...)
			fill(dst[len(dst):cap(dst)])
			out := b.Seal(dst, &nonce, msg)
			assert.Equal(t, concat(prefix, box), out)
			checkAppended(t, dst, out, fmt.Sprintf("Seal %d spare %d", n, spare))

			dst = append(make([]byte, 0, len(prefix)+spare), prefix...)
			fill(dst[len(dst):cap(dst)])
			out, err := b.Open(dst, &nonce, box)
			require.NoError(t, err)
			assert.Equal(t, concat(prefix, msg), out)
			checkAppended(t, dst, out, fmt.Sprintf("Open %d spare %d", n, spare))
		}
	}
}

// TestZeroSecretboxPanics: a Secretbox not made by NewSecretbox has no key
// and no round count, and must not quietly seal with an all-zero key.
func TestZeroSecretboxPanics(t *testing.T) {
	var b Secretbox
	var nonce [NonceSizeX]byte
	assert.Panics(t, func() { b.Seal(nil, &nonce, []byte("x")) })
	assert.Panics(t, func() { _, _ = b.Open(nil, &nonce, make([]byte, 40)) })
}
