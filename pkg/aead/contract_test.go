package aead

import (
	"bytes"
	"crypto/cipher"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
)

// The crypto/cipher.AEAD contract, checked on every AEAD this package
// returns (in the spirit of the standard library's internal
// cryptotest.TestAEAD, written for our rules): round trips, append
// semantics, in-place operation, the overlap rules and their panics, and
// that a failed Open leaves dst — and in place the ciphertext — exactly as
// it was.

// contractLens covers every path of Seal and Open: the short stack
// buffers and their ends (64, 448, 960), the 16-block head (961..1023),
// openHead (16 to 31 blocks beyond whole 32-block groups: 1024, 1025,
// 1535, 3072, chunkSize+1031) and the lone block 0 (2047, 2048, 2049),
// and several chunks.
var contractLens = []int{0, 1, 15, 16, 17, 63, 64, 65, 447, 448, 449, 959, 960, 961, 1023,
	1024, 1025, 1535, 2047, 2048, 2049, 3072, chunkSize + 1, chunkSize + 1031, 2*chunkSize + 100}

// contractADLens: none, partial and whole Poly1305 blocks, more than the
// short path gathers on the stack.
var contractADLens = []int{0, 1, 13, 16, 17, 100, 1000}

// contractAEADs is every cipher.AEAD the package returns, by constructor.
func contractAEADs(t *testing.T, key []byte) map[string]cipher.AEAD {
	t.Helper()
	out := map[string]cipher.AEAD{}
	for _, s := range aeadSuites() {
		out["New("+s.String()+")"] = mustNew(t, s, key)
	}
	a, err := NewChaCha20Poly1305(key)
	require.NoError(t, err)
	out["NewChaCha20Poly1305"] = a
	a, err = NewXChaCha20Poly1305(key)
	require.NoError(t, err)
	out["NewXChaCha20Poly1305"] = a
	return out
}

// forEachContractAEAD runs f on every AEAD, on every ChaCha kernel this
// CPU runs (Open takes a different path where the kernel computes block 0
// beside the message), with a fresh random source.
func forEachContractAEAD(t *testing.T, f func(t *testing.T, r *rand.Rand, a cipher.AEAD)) {
	r := testutil.Rand(t)
	aeads := contractAEADs(t, testutil.Bytes(r, KeySize))
	forEachKernel(t, ChaCha20Poly1305, func(t *testing.T) {
		for name, a := range aeads {
			t.Run(name, func(t *testing.T) { f(t, testutil.Rand(t), a) })
		}
	})
}

func TestAEADContractSizes(t *testing.T) {
	forEachContractAEAD(t, func(t *testing.T, _ *rand.Rand, a cipher.AEAD) {
		assert.Contains(t, []int{NonceSize, NonceSizeX}, a.NonceSize())
		assert.Equal(t, TagSize, a.Overhead())
	})
}

// TestAEADContractRoundTrip seals and opens every length with every
// additional-data length, out of place and in place, and checks that
// neither call modifies its inputs.
func TestAEADContractRoundTrip(t *testing.T) {
	forEachContractAEAD(t, func(t *testing.T, r *rand.Rand, a cipher.AEAD) {
		for _, n := range contractLens {
			for _, adLen := range contractADLens {
				name := fmt.Sprintf("len %d ad %d", n, adLen)
				nonce := testutil.Bytes(r, a.NonceSize())
				msg, ad := testutil.Bytes(r, n), testutil.Bytes(r, adLen)
				msg0, ad0, nonce0 := bytes.Clone(msg), bytes.Clone(ad), bytes.Clone(nonce)

				sealed := a.Seal(nil, nonce, msg, ad)
				require.Len(t, sealed, n+a.Overhead(), name)
				require.Equal(t, msg0, msg, "%s: Seal changed the plaintext", name)
				require.Equal(t, ad0, ad, "%s: Seal changed the additional data", name)
				require.Equal(t, nonce0, nonce, "%s: Seal changed the nonce", name)

				sealed0 := bytes.Clone(sealed)
				pt, err := a.Open(nil, nonce, sealed, ad)
				require.NoError(t, err, name)
				assertBytes(t, msg, pt, name)
				require.Equal(t, sealed0, sealed, "%s: Open changed the ciphertext", name)
				require.Equal(t, ad0, ad, "%s: Open changed the additional data", name)

				// In place: the ciphertext lands where the plaintext was and
				// the plaintext where the ciphertext was, in the same array.
				buf := make([]byte, n, n+a.Overhead())
				copy(buf, msg)
				inPlace := a.Seal(buf[:0], nonce, buf, ad)
				require.Equal(t, sealed, inPlace, "%s: in-place Seal", name)
				require.Equal(t, &buf[:1][0], &inPlace[0], "%s: in-place Seal moved", name)
				pt, err = a.Open(inPlace[:0], nonce, inPlace, ad)
				require.NoError(t, err, name)
				assertBytes(t, msg, pt, name)
				if n > 0 {
					require.Equal(t, &buf[0], &pt[0], "%s: in-place Open moved", name)
				}
			}
		}
	})
}

// TestAEADContractAppend checks that Seal and Open append to dst: the
// prefix is kept, the result does not depend on it, spare capacity is used
// (without allocating) and nothing is written past the result.
func TestAEADContractAppend(t *testing.T) {
	forEachContractAEAD(t, func(t *testing.T, r *rand.Rand, a cipher.AEAD) {
		for _, n := range []int{0, 5, 1024, 3000} {
			nonce := testutil.Bytes(r, a.NonceSize())
			msg, ad := testutil.Bytes(r, n), testutil.Bytes(r, 9)
			sealed := a.Seal(nil, nonce, msg, ad)
			for _, prefix := range [][]byte{{'a'}, testutil.Bytes(r, 512)} {
				for _, spare := range []int{0, n + TagSize, n + TagSize + 33} {
					name := fmt.Sprintf("len %d prefix %d spare %d", n, len(prefix), spare)
					dst := append(make([]byte, 0, len(prefix)+spare), prefix...)
					fill(dst[len(dst):cap(dst)])
					out := a.Seal(dst, nonce, msg, ad)
					require.Equal(t, prefix, out[:len(prefix)], name)
					require.Equal(t, sealed, out[len(prefix):], name)
					checkAppended(t, dst, out, name)

					dst = append(make([]byte, 0, len(prefix)+spare), prefix...)
					fill(dst[len(dst):cap(dst)])
					out, err := a.Open(dst, nonce, sealed, ad)
					require.NoError(t, err, name)
					require.Equal(t, prefix, out[:len(prefix)], name)
					assertBytes(t, msg, out[len(prefix):], name)
					checkAppended(t, dst, out, name)
				}
			}
		}
	})
}

// checkAppended checks that out, the result of appending to dst, reused
// dst's array when it had room, and that the capacity past out is intact.
func checkAppended(t *testing.T, dst, out []byte, name string) {
	t.Helper()
	if cap(dst) < len(out) {
		return // a new array, as append makes
	}
	require.Equal(t, &dst[:1][0], &out[0], "%s: a new array although dst had room", name)
	rest := dst[len(out):cap(dst)]
	require.True(t, isFill(rest), "%s: bytes written past the result", name)
}

// fill and isFill mark spare capacity.
func fill(b []byte) {
	for i := range b {
		b[i] = 0x5a
	}
}

func isFill(b []byte) bool {
	for _, c := range b {
		if c != 0x5a {
			return false
		}
	}
	return true
}

// TestAEADContractOverlap checks the overlap rules: the bytes Seal or
// Open appends may start exactly at the input or lie apart from it, and
// anything else — any shift of the output against the input (for Open
// also onto the tag alone), or output onto the additional data — panics
// before a byte is written.
func TestAEADContractOverlap(t *testing.T) {
	forEachContractAEAD(t, func(t *testing.T, r *rand.Rand, a cipher.AEAD) {
		for _, n := range []int{1, 64, 1024, 2048, chunkSize + 1} {
			nonce := testutil.Bytes(r, a.NonceSize())
			msg, ad := testutil.Bytes(r, n), testutil.Bytes(r, 13)
			sealed := a.Seal(nil, nonce, msg, ad)
			size := n + TagSize
			// buf holds the input at off; the output starts at off+shift.
			const off = 2 * TagSize
			buf := make([]byte, off+2*size+off)
			for _, shift := range overlapShifts(n) {
				if shift == 0 {
					continue // exactly in place
				}
				name := fmt.Sprintf("len %d shift %d", n, shift)
				dst := buf[off+shift : off+shift]

				// Seal's output is size bytes, its input n.
				if shift > -size && shift < n {
					fill(buf)
					copy(buf[off:], msg)
					before := bytes.Clone(buf)
					assert.PanicsWithValue(t, "aead: invalid buffer overlap", func() {
						a.Seal(dst, nonce, buf[off:off+n], ad)
					}, "Seal %s", name)
					assert.Equal(t, before, buf, "Seal %s: wrote before panicking", name)
				}
				// Open's output is n bytes, its input size.
				if shift > -n && shift < size {
					fill(buf)
					copy(buf[off:], sealed)
					before := bytes.Clone(buf)
					assert.PanicsWithValue(t, "aead: invalid buffer overlap", func() {
						_, _ = a.Open(dst, nonce, buf[off:off+size], ad)
					}, "Open %s", name)
					assert.Equal(t, before, buf, "Open %s: wrote before panicking", name)
				}
			}

			// Output right after the input, or ending right before it: fine.
			fill(buf)
			copy(buf[off:], msg)
			got := a.Seal(buf[off+n:off+n], nonce, buf[off:off+n], ad)
			assert.Equal(t, sealed, got, "Seal just past the plaintext")
			copy(buf[off+size:], sealed)
			pt, err := a.Open(buf[off:off], nonce, buf[off+size:off+2*size], ad)
			require.NoError(t, err)
			assert.Equal(t, msg, pt, "Open ending just before the ciphertext")

			// Output onto the additional data panics; additional data in
			// dst's existing bytes (a header sealed in front) does not.
			frame := make([]byte, 4+size)
			copy(frame, ad[:4])
			assert.PanicsWithValue(t, "aead: invalid buffer overlap", func() {
				a.Seal(frame[:0], nonce, msg, frame[2:6])
			}, "Seal onto the additional data")
			got = a.Seal(frame[:4], nonce, msg, frame[:4])
			assert.Equal(t, a.Seal(nil, nonce, msg, ad[:4]), got[4:], "header in front")
			pt, err = a.Open(nil, nonce, got[4:], got[:4])
			require.NoError(t, err)
			assert.Equal(t, msg, pt)
			assert.PanicsWithValue(t, "aead: invalid buffer overlap", func() {
				_, _ = a.Open(frame[:0], nonce, bytes.Clone(got[4:]), frame[:4])
			}, "Open onto the additional data")
		}
	})
}

// overlapShifts returns shifts of the output against an n-byte message
// (whose sealed form is n+16 bytes) around the inexact overlaps: just
// before and after the start, within the input, onto its last byte, and
// (for Open, whose input ends in the tag) onto the tag alone. The caller
// keeps those that overlap the operation's input.
func overlapShifts(n int) []int {
	return []int{-TagSize - 1, -TagSize, -1, 1, 2, 63, n / 2, n - 1, n, n + 1, n + TagSize - 1}
}

// TestAEADContractFailedOpen tampers with every part of a sealed message
// (nonce, additional data, ciphertext, tag, length) and opens it into a
// separate buffer and in place: Open must return ErrOpen and nil, leave
// dst's whole capacity untouched, and in place leave the ciphertext
// exactly as it was.
func TestAEADContractFailedOpen(t *testing.T) {
	forEachContractAEAD(t, func(t *testing.T, r *rand.Rand, a cipher.AEAD) {
		for _, n := range contractLens {
			nonce := testutil.Bytes(r, a.NonceSize())
			msg, ad := testutil.Bytes(r, n), testutil.Bytes(r, 1+n%40)
			sealed := a.Seal(nil, nonce, msg, ad)
			for _, tc := range tamperings(r, nonce, ad, sealed) {
				name := fmt.Sprintf("len %d: %s", n, tc.name)
				dst := sentinel(len(tc.sealed) + 64)
				pt, err := a.Open(dst, tc.nonce, tc.sealed, tc.ad)
				assert.ErrorIs(t, err, ErrOpen, name)
				assert.Nil(t, pt, name)
				assert.True(t, untouched(dst), "%s: Open wrote to dst", name)

				inPlace := bytes.Clone(tc.sealed)
				pt, err = a.Open(inPlace[:0], tc.nonce, inPlace, tc.ad)
				assert.ErrorIs(t, err, ErrOpen, name)
				assert.Nil(t, pt, name)
				assert.Equal(t, tc.sealed, inPlace, "%s: failed in-place Open changed the ciphertext", name)
			}
		}
	})
}

// tampering is one altered input to Open.
type tampering struct {
	name              string
	nonce, ad, sealed []byte
}

// tamperings returns sealed (ciphertext || tag) altered in each way Open
// must refuse: a flipped bit of the nonce, the additional data, the first
// and last ciphertext bytes and the tag, a byte cut or added, the
// additional data dropped, and inputs shorter than a tag.
func tamperings(r *rand.Rand, nonce, ad, sealed []byte) []tampering {
	flip := func(b []byte, i int) []byte {
		b = bytes.Clone(b)
		b[i] ^= 1 << r.IntN(8)
		return b
	}
	ct := len(sealed) - TagSize
	out := []tampering{
		{"nonce bit", flip(nonce, r.IntN(len(nonce))), ad, sealed},
		{"tag bit", nonce, ad, flip(sealed, ct+r.IntN(TagSize))},
		{"last tag byte", nonce, ad, flip(sealed, len(sealed)-1)},
		{"cut", nonce, ad, sealed[:len(sealed)-1]},
		{"added byte", nonce, ad, append(bytes.Clone(sealed), 0)},
		{"no tag", nonce, ad, sealed[:min(len(sealed), TagSize-1)]},
		{"empty", nonce, ad, nil},
	}
	if len(ad) > 0 {
		out = append(out,
			tampering{"additional data bit", nonce, flip(ad, r.IntN(len(ad))), sealed},
			tampering{"additional data dropped", nonce, nil, sealed})
	}
	if ct > 0 {
		out = append(out,
			tampering{"first ciphertext byte", nonce, ad, flip(sealed, 0)},
			tampering{"last ciphertext byte", nonce, ad, flip(sealed, ct-1)})
	}
	return out
}

// TestAEADContractNonceSize checks that Seal and Open panic on a nonce of
// any other size, as crypto/cipher's own AEADs do, before writing.
func TestAEADContractNonceSize(t *testing.T) {
	forEachContractAEAD(t, func(t *testing.T, r *rand.Rand, a cipher.AEAD) {
		sealed := a.Seal(nil, make([]byte, a.NonceSize()), []byte("hello"), nil)
		for _, n := range []int{0, 8, 11, 12, 13, 16, 23, 24, 25, 32} {
			if n == a.NonceSize() {
				continue
			}
			dst := sentinel(64)
			assert.PanicsWithValue(t, "aead: wrong nonce size passed to Seal", func() {
				a.Seal(dst, make([]byte, n), []byte("x"), nil)
			}, "Seal nonce %d", n)
			assert.PanicsWithValue(t, "aead: wrong nonce size passed to Open", func() {
				_, _ = a.Open(dst, make([]byte, n), sealed, nil)
			}, "Open nonce %d", n)
			assert.True(t, untouched(dst))
		}
	})
}
