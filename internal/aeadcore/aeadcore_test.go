package aeadcore

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/nacl/secretbox"

	"github.com/spipe-dev/spipe/internal/chachacore"
	"github.com/spipe-dev/spipe/internal/salsacore"
	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
)

var roundCounts = []int{20, 12, 8}

// adLengths are additional data lengths around the Poly1305 block size.
var adLengths = []int{0, 1, 13, 15, 16, 17, 31, 64, 100}

// TestChaChaMatchesReference seals and opens every message length up to
// MaxChaCha (each kernel's whole range and its edges) with additional
// data around the block size, at every round count, against the generic
// reference, at random alignments of every buffer.
func TestChaChaMatchesReference(t *testing.T) {
	r := testutil.Rand(t)
	withKernels(t, func(t *testing.T) {
		for _, rounds := range roundCounts {
			ref := reference{rounds}
			for _, adLen := range adLengths {
				for n := 0; n <= MaxChaCha; n++ {
					s := chachaState(r)
					pt := at(r, n, r.IntN(64))
					ad := at(r, adLen, r.IntN(64))
					wantCT, wantTag := ref.chacha(t, s, pt, ad)

					ct := at(r, n, r.IntN(64))
					var tag [16]byte
					st := s
					if !takesChaCha(n) {
						assertHandedBack(t, &s, rounds, ct, pt, ad, &tag)
						continue
					}
					require.True(t, SealChaCha(&st, rounds, ct, pt, ad, &tag))
					require.Equal(t, s, st, "the state is read only")
					if !assertBytes(t, wantCT, ct, "seal r%d ad %d n %d", rounds, adLen, n) ||
						!assert.Equal(t, wantTag, tag, "tag r%d ad %d n %d", rounds, adLen, n) {
						return
					}

					out := at(r, n, r.IntN(64))
					ok, handled := OpenChaCha(&s, rounds, out, ct, ad, &tag)
					require.True(t, handled)
					require.True(t, ok, "open r%d ad %d n %d", rounds, adLen, n)
					if !assertBytes(t, pt, out, "open r%d ad %d n %d", rounds, adLen, n) {
						return
					}
				}
			}
		}
	})
}

// TestChaChaMatchesXCrypto holds ChaCha20-Poly1305 to x/crypto's, an
// independent implementation, for every length up to MaxChaCha.
func TestChaChaMatchesXCrypto(t *testing.T) {
	r := testutil.Rand(t)
	withKernels(t, func(t *testing.T) {
		for _, adLen := range []int{0, 13, 32} {
			for n := 0; n <= MaxChaCha; n++ {
				key, nonce := testutil.Bytes(r, 32), testutil.Bytes(r, 12)
				pt, ad := testutil.Bytes(r, n), testutil.Bytes(r, adLen)
				x, err := chacha20poly1305.New(key)
				require.NoError(t, err)
				want := x.Seal(nil, nonce, pt, ad)
				var s chachacore.State
				chachacore.Init(&s, key, nonce)
				got := make([]byte, n+16)
				if !takesChaCha(n) {
					continue
				}
				require.True(t, SealChaCha(&s, 20, got[:n], pt, ad, (*[16]byte)(got[n:])))
				if !assert.Equal(t, want, got, "ad %d n %d", adLen, n) {
					return
				}
			}
		}
	})
}

// TestSecretboxMatchesReference is TestChaChaMatchesReference for
// secretbox (20 and 12 rounds, the two the package offers).
func TestSecretboxMatchesReference(t *testing.T) {
	r := testutil.Rand(t)
	withKernels(t, func(t *testing.T) {
		for _, rounds := range []int{20, 12} {
			ref := reference{rounds}
			for n := 0; n <= MaxSecretbox; n++ {
				s := salsaState(r)
				pt := at(r, n, r.IntN(64))
				wantCT, wantTag := ref.secretbox(t, s, pt)
				ct := at(r, n, r.IntN(64))
				var tag [16]byte
				st := s
				if !takesSecretbox(n) {
					assertSecretboxHandedBack(t, &s, rounds, ct, pt, &tag)
					continue
				}
				require.True(t, SealSecretbox(&st, rounds, ct, pt, &tag))
				require.Equal(t, s, st, "the state is read only")
				if !assertBytes(t, wantCT, ct, "seal r%d n %d", rounds, n) ||
					!assert.Equal(t, wantTag, tag, "tag r%d n %d", rounds, n) {
					return
				}
				out := at(r, n, r.IntN(64))
				ok, handled := OpenSecretbox(&s, rounds, out, ct, &tag)
				require.True(t, handled)
				require.True(t, ok, "open r%d n %d", rounds, n)
				if !assertBytes(t, pt, out, "open r%d n %d", rounds, n) {
					return
				}
			}
		}
	})
}

// TestSecretboxMatchesXCrypto holds secretbox to x/crypto's nacl/secretbox
// (its HSalsa20 subkey and the rest of the state from the same key and
// nonce).
func TestSecretboxMatchesXCrypto(t *testing.T) {
	r := testutil.Rand(t)
	withKernels(t, func(t *testing.T) {
		for n := 0; n <= MaxSecretbox; n++ {
			var key [32]byte
			var nonce [24]byte
			copy(key[:], testutil.Bytes(r, 32))
			copy(nonce[:], testutil.Bytes(r, 24))
			pt := testutil.Bytes(r, n)
			want := secretbox.Seal(nil, pt, &nonce, &key)
			var sub [32]byte
			salsacore.HSalsa(&sub, &key, (*[16]byte)(nonce[:16]), 20)
			var s salsacore.State
			salsacore.Init(&s, sub[:], nonce[16:])
			got := make([]byte, 16+n)
			if !takesSecretbox(n) {
				continue
			}
			require.True(t, SealSecretbox(&s, 20, got[16:], pt, (*[16]byte)(got[:16])))
			if !assert.Equal(t, want, got, "n %d", n) {
				return
			}
		}
	})
}

// TestInPlace: sealing and opening with dst = src gives what separate
// buffers give.
func TestInPlace(t *testing.T) {
	r := testutil.Rand(t)
	withKernels(t, func(t *testing.T) {
		for _, n := range []int{0, 1, 63, 64, 65, 191, 192, 193, 255, 256, 257, 300, 448, 449, 479, 480, 481, 511, 512, 513, 1000, 1024, 1025, 1056} {
			pt := testutil.Bytes(r, n)
			if takesChaCha(n) {
				s, ad := chachaState(r), testutil.Bytes(r, 13)
				want, wantTag := reference{20}.chacha(t, s, pt, ad)
				buf := bytes.Clone(pt)
				var tag [16]byte
				require.True(t, SealChaCha(&s, 20, buf, buf, ad, &tag))
				assertBytes(t, want, buf, "seal in place, n %d", n)
				assert.Equal(t, wantTag, tag)
				ok, _ := OpenChaCha(&s, 20, buf, buf, ad, &tag)
				assert.True(t, ok)
				assertBytes(t, pt, buf, "open in place, n %d", n)
			}
			if !takesSecretbox(n) {
				continue
			}
			s := salsaState(r)
			want, wantTag := reference{20}.secretbox(t, s, pt)
			buf := bytes.Clone(pt)
			var tag [16]byte
			require.True(t, SealSecretbox(&s, 20, buf, buf, &tag))
			assertBytes(t, want, buf, "secretbox seal in place, n %d", n)
			assert.Equal(t, wantTag, tag)
			ok, _ := OpenSecretbox(&s, 20, buf, buf, &tag)
			assert.True(t, ok)
			assertBytes(t, pt, buf, "secretbox open in place, n %d", n)
		}
	})
}

// TestForgeriesWriteNothing flips single bits of the ciphertext, the tag
// and the additional data: Open must refuse each and leave every byte of
// dst (beyond the message too) as it was.
func TestForgeriesWriteNothing(t *testing.T) {
	r := testutil.Rand(t)
	withKernels(t, func(t *testing.T) {
		for _, n := range []int{0, 1, 17, 64, 100, 192, 200, 256, 300, 449, 481, 512, 700, 1024, 1056} {
			s := chachaState(r)
			pt, ad := testutil.Bytes(r, n), testutil.Bytes(r, 20)
			ct, tag := reference{20}.chacha(t, s, pt, ad)
			try := func(what string, ct, ad []byte, tag [16]byte) {
				dst := bytes.Repeat([]byte{0xa5}, n+64)
				ok, handled := OpenChaCha(&s, 20, dst[:n], ct, ad, &tag)
				require.Equal(t, takesChaCha(n), handled, "n %d", n)
				assert.False(t, ok, "%s, n %d", what, n)
				assert.Equal(t, bytes.Repeat([]byte{0xa5}, n+64), dst, "%s wrote to dst, n %d", what, n)
			}
			for i := 0; i < n; i += 1 + n/7 {
				c := bytes.Clone(ct)
				c[i] ^= 1 << (i % 8)
				try("ciphertext", c, ad, tag)
			}
			for i := range 16 {
				bad := tag
				bad[i] ^= 0x80 >> (i % 8)
				try("tag", ct, ad, bad)
			}
			a := bytes.Clone(ad)
			a[len(a)-1] ^= 1
			try("additional data", ct, a, tag)
			try("additional data cut", ct, ad[:len(ad)-1], tag)

			if !takesSecretbox(n) {
				continue
			}
			sb := salsaState(r)
			bct, btag := reference{20}.secretbox(t, sb, pt)
			for i := range 16 {
				bad := btag
				bad[i] ^= 1
				dst := bytes.Repeat([]byte{0xa5}, n+64)
				ok, handled := OpenSecretbox(&sb, 20, dst[:n], bct, &bad)
				require.True(t, handled, "n %d", n)
				assert.False(t, ok)
				assert.Equal(t, bytes.Repeat([]byte{0xa5}, n+64), dst, "secretbox forgery wrote to dst, n %d", n)
			}
		}
	})
}

// TestTooLongIsHandedBack: a message past a kernel's limit, or a short
// dst, is the caller's, untouched.
func TestTooLongIsHandedBack(t *testing.T) {
	r := testutil.Rand(t)
	var tag [16]byte
	s := chachaState(r)
	buf := make([]byte, max(MaxChaCha, MaxSecretbox)+1)
	assert.False(t, SealChaCha(&s, 20, buf, buf[:MaxChaCha+1], nil, &tag))
	_, handled := OpenChaCha(&s, 20, buf, buf[:MaxChaCha+1], nil, &tag)
	assert.False(t, handled)
	assert.False(t, SealChaCha(&s, 20, buf[:9], buf[:10], nil, &tag))
	assert.False(t, SealSecretbox(&s, 20, buf, buf[:MaxSecretbox+1], &tag))
	_, handled = OpenSecretbox(&s, 20, buf, buf[:MaxSecretbox+1], &tag)
	assert.False(t, handled)
	assert.Equal(t, make([]byte, len(buf)), buf)
	assert.Equal(t, [16]byte{}, tag)
}

// TestGapIsHandedBack: the lengths past the avx512 tier's kernels are
// the caller's on every tier without IFMA, untouched; the IFMA tier takes
// them (and is held to the reference on them in
// TestChaChaMatchesReference).
func TestGapIsHandedBack(t *testing.T) {
	r := testutil.Rand(t)
	kerneltest.ForEach(t, sw, func(t *testing.T) {
		for _, n := range []int{257, 300, 447, 448, 1024} {
			s := chachaState(r)
			var tag [16]byte
			src, ad := testutil.Bytes(r, n), testutil.Bytes(r, 13)
			if Kernel() == "avx512ifma" {
				assert.True(t, SealChaCha(&s, 20, make([]byte, n), src, ad, &tag), "n %d", n)
				continue
			}
			assertHandedBack(t, &s, 20, make([]byte, n), src, ad, &tag)
		}
	})
}

// assertHandedBack: neither Seal nor Open takes the message, and neither
// writes to dst or tag.
func assertHandedBack(t *testing.T, s *[16]uint32, rounds int, dst, src, ad []byte, tag *[16]byte) {
	t.Helper()
	d, g := bytes.Clone(dst), *tag
	assert.False(t, SealChaCha(s, rounds, dst, src, ad, tag), "seal n %d", len(src))
	_, handled := OpenChaCha(s, rounds, dst, src, ad, tag)
	assert.False(t, handled, "open n %d", len(src))
	assert.Equal(t, d, dst, "n %d", len(src))
	assert.Equal(t, g, *tag, "n %d", len(src))
}

// assertSecretboxHandedBack is assertHandedBack for secretbox.
func assertSecretboxHandedBack(t *testing.T, s *[16]uint32, rounds int, dst, src []byte, tag *[16]byte) {
	t.Helper()
	d, g := bytes.Clone(dst), *tag
	assert.False(t, SealSecretbox(s, rounds, dst, src, tag), "seal n %d", len(src))
	_, handled := OpenSecretbox(s, rounds, dst, src, tag)
	assert.False(t, handled, "open n %d", len(src))
	assert.Equal(t, d, dst, "n %d", len(src))
	assert.Equal(t, g, *tag, "n %d", len(src))
}

// TestGenericHandlesNothing: with the kernels off every message is the
// caller's.
func TestGenericHandlesNothing(t *testing.T) {
	restore, err := UseKernel("generic")
	require.NoError(t, err)
	defer restore()
	var s [16]uint32
	var tag [16]byte
	buf := make([]byte, 64)
	assert.False(t, SealChaCha(&s, 20, buf, buf, nil, &tag))
	_, handled := OpenChaCha(&s, 20, buf, buf, nil, &tag)
	assert.False(t, handled)
	assert.False(t, SealSecretbox(&s, 20, buf, buf, &tag))
	_, handled = OpenSecretbox(&s, 20, buf, buf, &tag)
	assert.False(t, handled)
}

// TestNoAllocations: the state, tag and buffers stay on the caller's
// stack.
func TestNoAllocations(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		buf := make([]byte, MaxChaCha)
		ad := make([]byte, 13)
		allocs := testing.AllocsPerRun(100, func() {
			var s [16]uint32
			var tag [16]byte
			SealChaCha(&s, 20, buf[:200], buf[:200], ad, &tag)
			OpenChaCha(&s, 20, buf[:200], buf[:200], ad, &tag)
			SealChaCha(&s, 20, buf, buf, ad, &tag)
			OpenChaCha(&s, 20, buf, buf, ad, &tag)
			SealSecretbox(&s, 20, buf[:300], buf[:300], &tag)
			OpenSecretbox(&s, 20, buf[:300], buf[:300], &tag)
			SealSecretbox(&s, 20, buf[:1000], buf[:1000], &tag)
			OpenSecretbox(&s, 20, buf[:1000], buf[:1000], &tag)
		})
		assert.Zero(t, allocs)
	})
}

// assertBytes compares by content, so that empty and nil are the same.
func assertBytes(t *testing.T, want, got []byte, msgAndArgs ...any) bool {
	t.Helper()
	if len(want) == 0 && len(got) == 0 {
		return true
	}
	return assert.Equal(t, want, got, msgAndArgs...)
}
