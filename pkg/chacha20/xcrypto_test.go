package chacha20_test

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/streamtest"
	"github.com/spipe-dev/spipe/pkg/chacha20"
	"github.com/stretchr/testify/require"
	xchacha "golang.org/x/crypto/chacha20"
)

// Differential tests: our ciphers against golang.org/x/crypto/chacha20
// where it has the variant (20 rounds, 12- and 24-byte nonces, and the
// original 8-byte-nonce layout mapped onto it), and against the test's
// own reference block function (helpers_test.go) for the rest.

// randomCounter picks a starting block for a message of n bytes: often 0,
// often close to the low word's wrap, otherwise anywhere that leaves room.
func randomCounter(r *rand.Rand, n int, limit uint64) uint64 {
	blocks := uint64(n/chacha20.BlockSize + 1)
	switch r.IntN(4) {
	case 0:
		return 0
	case 1:
		return limit - blocks - uint64(r.IntN(3))
	default:
		return r.Uint64N(limit - blocks)
	}
}

// TestDifferentialXCrypto compares RFC 8439 ChaCha20 and XChaCha20 with
// x/crypto on random keys, nonces, counters and lengths 0..4096, ours fed
// in random chunks and x/crypto in one call.
func TestDifferentialXCrypto(t *testing.T) {
	r := testutil.Rand(t)
	iters := streamtest.Iterations(300, 60)
	family.ForEachKernel(t, func(t *testing.T) {
		for i := range iters {
			nonceSize := chacha20.NonceSize
			if i%2 == 1 {
				nonceSize = chacha20.NonceSizeX
			}
			key := testutil.Bytes(r, chacha20.KeySize)
			nonce := testutil.Bytes(r, nonceSize)
			n := r.IntN(4097)
			counter := randomCounter(r, n, 1<<32)
			src := testutil.Bytes(r, n)

			ref, err := xchacha.NewUnauthenticatedCipher(key, nonce)
			require.NoError(t, err)
			ref.SetCounter(uint32(counter))
			want := make([]byte, n)
			ref.XORKeyStream(want, src)

			ours, err := chacha20.NewUnauthenticatedCipher(key, nonce)
			require.NoError(t, err)
			ours.SetCounter(counter)
			got := make([]byte, n)
			streamtest.XORInChunks(r, ours, got, src)
			require.Equal(t, want, got, "nonce %d bytes, counter %#x, %d bytes", nonceSize, counter, n)
		}
	})
}

// xcryptoDJB produces the original-layout ChaCha20 key stream (256-bit
// key, 8-byte nonce, 64-bit counter) with x/crypto: the original state
// equals the RFC 8439 state whose 12-byte nonce is the high counter word
// followed by the 8-byte nonce, so each run of blocks below a 2^32 boundary
// is an RFC 8439 stream. n bytes from byte skip of block.
func xcryptoDJB(t *testing.T, key, nonce []byte, block uint64, skip, n int) []byte {
	t.Helper()
	out := make([]byte, 0, n+chacha20.BlockSize)
	for len(out) < n+skip {
		var ietf [12]byte
		binary.LittleEndian.PutUint32(ietf[:4], uint32(block>>32))
		copy(ietf[4:], nonce)
		c, err := xchacha.NewUnauthenticatedCipher(key, ietf[:])
		require.NoError(t, err)
		c.SetCounter(uint32(block))
		// Blocks wanted, but no further than the next high-word change.
		run := min(uint64(n+skip-len(out)+chacha20.BlockSize-1)/chacha20.BlockSize, 1<<32-uint64(uint32(block)))
		out = append(out, keystreamX(c, int(run)*chacha20.BlockSize)...)
		block += run
	}
	return out[skip : skip+n]
}

func keystreamX(c *xchacha.Cipher, n int) []byte {
	b := make([]byte, n)
	c.XORKeyStream(b, b)
	return b
}

// TestDifferentialDJBLayout compares the 8-byte-nonce ChaCha20 with
// x/crypto through that mapping, on random starting positions (many within
// a few blocks of a 2^32 boundary, so the high word must carry mid-message)
// and lengths 0..4096.
func TestDifferentialDJBLayout(t *testing.T) {
	r := testutil.Rand(t)
	iters := streamtest.Iterations(200, 40)
	family.ForEachKernel(t, func(t *testing.T) {
		for range iters {
			key := testutil.Bytes(r, chacha20.KeySize)
			nonce := testutil.Bytes(r, chacha20.NonceSizeDJB)
			n := r.IntN(4097)
			var block uint64
			switch r.IntN(3) {
			case 0:
				// Up to 70 blocks before a 2^32 boundary other than the
				// last (the end of the 2^64 space is tested apart).
				block = (1+r.Uint64N(1<<32-2))<<32 - r.Uint64N(70)
			case 1:
				block = r.Uint64N(1 << 14)
			default:
				block = r.Uint64() >> 1
			}
			skip := r.IntN(chacha20.BlockSize)
			want := xcryptoDJB(t, key, nonce, block, skip, n)

			// Seek where the byte offset fits in 64 bits; SetCounter and
			// discarding otherwise.
			c := mustCipher(t, key, nonce, 20)
			if block < 1<<58 {
				c.Seek(block*chacha20.BlockSize + uint64(skip))
			} else {
				c.SetCounter(block)
				streamtest.Keystream(c, skip)
			}
			got := streamtest.ChunkedKeystream(r, c, n)
			require.Equal(t, want, got, "block %#x + %d, %d bytes", block, skip, n)
		}
	})
}

// TestDifferentialReference compares the variants x/crypto lacks (8 and
// 12 rounds, 128-bit keys, reduced-round RFC 8439 layout) with the
// reference block function, which TestReferenceMatchesVectors holds to the
// external vectors.
func TestDifferentialReference(t *testing.T) {
	r := testutil.Rand(t)
	iters := streamtest.Iterations(120, 30)
	family.ForEachKernel(t, func(t *testing.T) {
		for i := range iters {
			rounds := []int{8, 12, 20}[i%3]
			keySize, nonceSize := chacha20.KeySize, chacha20.NonceSizeDJB
			switch r.IntN(3) {
			case 0:
				keySize = chacha20.KeySize128
			case 1:
				nonceSize = chacha20.NonceSize
			}
			key := testutil.Bytes(r, keySize)
			nonce := testutil.Bytes(r, nonceSize)
			n := r.IntN(4097)
			limit := uint64(1 << 32)
			if nonceSize == chacha20.NonceSizeDJB {
				limit = 1 << 40 // crosses 2^32 boundaries too
			}
			counter := randomCounter(r, n, limit)
			if nonceSize == chacha20.NonceSizeDJB && r.IntN(2) == 0 {
				counter = 1<<32 - uint64(r.IntN(40))
			}
			want := refStream(key, nonce, counter, 0, rounds, n)

			c := mustCipher(t, key, nonce, rounds)
			c.SetCounter(counter)
			got := streamtest.ChunkedKeystream(r, c, n)
			require.Equal(t, want, got, "rounds %d, key %d, nonce %d, counter %#x, %d bytes", rounds, keySize, nonceSize, counter, n)
		}
	})
}

// TestDifferentialHChaCha20 compares HChaCha20 with x/crypto's on random
// inputs.
func TestDifferentialHChaCha20(t *testing.T) {
	r := testutil.Rand(t)
	for range 200 {
		key := testutil.Bytes(r, 32)
		nonce := testutil.Bytes(r, 16)
		want, err := xchacha.HChaCha20(key, nonce)
		require.NoError(t, err)
		got, err := chacha20.HChaCha20(key, nonce)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
}
