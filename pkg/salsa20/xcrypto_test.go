package salsa20_test

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/streamtest"
	"github.com/spipe-dev/spipe/pkg/salsa20"
	"github.com/stretchr/testify/require"
	xsalsa20 "golang.org/x/crypto/salsa20"
	//lint:ignore SA1019 the low-level package is the reference for counters and the Salsa20/8 core; test-only.
	"golang.org/x/crypto/salsa20/salsa"
)

// Differential tests: our ciphers against golang.org/x/crypto/salsa20 and
// salsa20/salsa where it has the variant (Salsa20/20 with a 256-bit key,
// XSalsa20, HSalsa20, the Salsa20/8 core), and against the test's own
// reference block function for Salsa20/12 and 128-bit keys.

// randomBlock picks a starting block: often 0, often a few blocks below a
// 2^32 boundary (so the counter carries into word 9 mid-message),
// otherwise anywhere below 2^63.
func randomBlock(r *rand.Rand) uint64 {
	switch r.IntN(3) {
	case 0:
		return 0
	case 1:
		return (1+r.Uint64N(1<<31))<<32 - r.Uint64N(70)
	default:
		return r.Uint64() >> 1
	}
}

// xcryptoStream encrypts src with x/crypto's keyed Salsa20/20 loop from
// block counter (nonce in bytes 0-7, little-endian counter in 8-15).
func xcryptoStream(key, nonce []byte, counter uint64, dst, src []byte) {
	var in [16]byte
	copy(in[:8], nonce)
	binary.LittleEndian.PutUint64(in[8:], counter)
	salsa.XORKeyStream(dst, src, &in, (*[32]byte)(key))
}

// TestDifferentialXCrypto compares Salsa20/20 (random 64-bit starting
// counters) and XSalsa20 (from block 0, as x/crypto's API offers) with
// x/crypto on random keys, nonces and lengths 0..4096, ours in random
// chunks.
func TestDifferentialXCrypto(t *testing.T) {
	r := testutil.Rand(t)
	iters := streamtest.Iterations(300, 60)
	family.ForEachKernel(t, func(t *testing.T) {
		for i := range iters {
			key := testutil.Bytes(r, salsa20.KeySize)
			n := r.IntN(4097)
			src := testutil.Bytes(r, n)
			want := make([]byte, n)
			got := make([]byte, n)
			if i%2 == 0 {
				nonce := testutil.Bytes(r, salsa20.NonceSize)
				counter := randomBlock(r)
				xcryptoStream(key, nonce, counter, want, src)
				c := mustCipher(t, key, nonce, 20)
				c.SetCounter(counter)
				streamtest.XORInChunks(r, c, got, src)
				require.Equal(t, want, got, "salsa20, counter %#x, %d bytes", counter, n)
			} else {
				nonce := testutil.Bytes(r, salsa20.NonceSizeX)
				xsalsa20.XORKeyStream(want, src, nonce, (*[32]byte)(key))
				c, err := salsa20.NewUnauthenticatedCipher(key, nonce)
				require.NoError(t, err)
				streamtest.XORInChunks(r, c, got, src)
				require.Equal(t, want, got, "xsalsa20, %d bytes", n)
			}
		}
	})
}

// TestDifferentialSalsa8 compares Salsa20/8, with 256- and 128-bit keys,
// with x/crypto's Salsa20/8 core (Core208) applied to the input block the
// specification builds for each counter value.
func TestDifferentialSalsa8(t *testing.T) {
	r := testutil.Rand(t)
	family.ForEachKernel(t, func(t *testing.T) {
		for i := range 100 {
			keySize := salsa20.KeySize
			if i%2 == 1 {
				keySize = salsa20.KeySize128
			}
			key := testutil.Bytes(r, keySize)
			nonce := testutil.Bytes(r, salsa20.NonceSize)
			counter := randomBlock(r)
			n := r.IntN(2049)

			// The input block: constants at words 0, 5, 10, 15; key at
			// 1-4 and 11-14 (the same half twice for 128-bit keys); nonce
			// at 6-7; counter at 8-9.
			constants := "expand 32-byte k"
			k2 := key[16%keySize:]
			if keySize == salsa20.KeySize128 {
				constants, k2 = "expand 16-byte k", key
			}
			want := make([]byte, 0, n+64)
			for b := counter; len(want) < n; b++ {
				var in, out [64]byte
				copy(in[0:], constants[0:4])
				copy(in[4:], key[:16])
				copy(in[20:], constants[4:8])
				copy(in[24:], nonce)
				binary.LittleEndian.PutUint64(in[32:], b)
				copy(in[40:], constants[8:12])
				copy(in[44:], k2[:16])
				copy(in[60:], constants[12:16])
				salsa.Core208(&out, &in)
				want = append(want, out[:]...)
			}
			want = want[:n]

			c := mustCipher(t, key, nonce, 8)
			c.SetCounter(counter)
			got := streamtest.ChunkedKeystream(r, c, n)
			require.Equal(t, want, got, "key %d bytes, counter %#x, %d bytes", keySize, counter, n)
		}
	})
}

// TestDifferentialReference compares Salsa20/12, and 128-bit keys at every
// round count, with the reference block function, which
// TestReferenceMatchesVectors holds to the external vectors.
func TestDifferentialReference(t *testing.T) {
	r := testutil.Rand(t)
	iters := streamtest.Iterations(90, 30)
	family.ForEachKernel(t, func(t *testing.T) {
		for i := range iters {
			rounds := []int{12, 8, 20}[i%3]
			keySize := salsa20.KeySize128
			if rounds == 12 && r.IntN(2) == 0 {
				keySize = salsa20.KeySize
			}
			key := testutil.Bytes(r, keySize)
			nonce := testutil.Bytes(r, salsa20.NonceSize)
			counter := randomBlock(r)
			n := r.IntN(4097)
			want := refStream(key, nonce, counter, 0, rounds, n)

			c := mustCipher(t, key, nonce, rounds)
			c.SetCounter(counter)
			got := streamtest.ChunkedKeystream(r, c, n)
			require.Equal(t, want, got, "rounds %d, key %d, counter %#x, %d bytes", rounds, keySize, counter, n)
		}
	})
}

// TestDifferentialCore compares Core with 8 rounds with x/crypto's
// Core208, and HSalsa20 with x/crypto's, on random inputs.
func TestDifferentialCore(t *testing.T) {
	r := testutil.Rand(t)
	for range 300 {
		var in, want, got [64]byte
		copy(in[:], testutil.Bytes(r, 64))
		salsa.Core208(&want, &in)
		salsa20.Core(&got, &in, 8)
		require.Equal(t, want, got)

		key := testutil.Bytes(r, 32)
		nonce := testutil.Bytes(r, 16)
		var hwant [32]byte
		salsa.HSalsa20(&hwant, (*[16]byte)(nonce), (*[32]byte)(key), &salsa.Sigma)
		hgot, err := salsa20.HSalsa20(key, nonce)
		require.NoError(t, err)
		require.Equal(t, hwant[:], hgot)
	}
}
