package salsa20_test

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/streamtest"
	"github.com/spipe-dev/spipe/pkg/salsa20"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestChunkingInvariance: any split of a message into XORKeyStream calls
// gives the bytes of one call (streamtest.ChunkingInvariance).
func TestChunkingInvariance(t *testing.T) { streamtest.ChunkingInvariance(t, family) }

// TestInPlace: encrypting and decrypting in place (streamtest.InPlace).
func TestInPlace(t *testing.T) { streamtest.InPlace(t, family) }

// TestMisusePanics: overlap and a short dst panic before any effect
// (streamtest.MisusePanics).
func TestMisusePanics(t *testing.T) { streamtest.MisusePanics(t, family) }

// TestConstructorErrors checks that wrong key, nonce and round counts are
// refused with an error naming the problem (and never a cipher), and that
// Core refuses round counts it does not implement.
func TestConstructorErrors(t *testing.T) {
	k32, k16 := make([]byte, 32), make([]byte, 16)
	n8, n24 := make([]byte, 8), make([]byte, 24)
	for _, tc := range []struct {
		name       string
		key, nonce []byte
		rounds     int
		want       string
	}{
		{"key 31", make([]byte, 31), n8, 20, "key size"},
		{"key 33", make([]byte, 33), n24, 20, "key size"},
		{"key 0", nil, n8, 20, "key size"},
		{"16-byte key with 24-byte nonce", k16, n24, 20, "key size"},
		{"nonce 0", k32, nil, 20, "nonce size"},
		{"nonce 12", k32, make([]byte, 12), 20, "nonce size"},
		{"nonce 16", k32, make([]byte, 16), 20, "nonce size"},
		{"rounds 0", k32, n8, 0, "round"},
		{"rounds 10", k32, n8, 10, "round"},
		{"rounds 24", k32, n24, 24, "round"},
	} {
		c, err := salsa20.NewUnauthenticatedCipherWithRounds(tc.key, tc.nonce, tc.rounds)
		assert.Nil(t, c, tc.name)
		if assert.Error(t, err, tc.name) {
			assert.Contains(t, err.Error(), tc.want, tc.name)
			assert.Contains(t, err.Error(), "salsa20:", tc.name)
		}
	}
	// NewUnauthenticatedCipher is the 20-round cipher of
	// NewUnauthenticatedCipherWithRounds, for the same keys and nonces (as
	// in pkg/chacha20): the same key stream, and the same refusals.
	for _, kn := range [][2][]byte{{k16, n8}, {k32, n8}, {k32, n24}} {
		key, nonce := kn[0], kn[1]
		c, err := salsa20.NewUnauthenticatedCipher(key, nonce)
		require.NoError(t, err, "key %d nonce %d", len(key), len(nonce))
		assert.Equal(t, streamtest.Keystream(mustCipher(t, key, nonce, 20), 200), streamtest.Keystream(c, 200))
	}
	for _, kn := range [][2][]byte{{k16, n24}, {k32, nil}, {make([]byte, 31), n8}} {
		c, err := salsa20.NewUnauthenticatedCipher(kn[0], kn[1])
		assert.Nil(t, c)
		assert.Error(t, err)
	}
	var err error

	_, err = salsa20.HSalsa20(k16, make([]byte, 16))
	assert.ErrorContains(t, err, "key size")
	_, err = salsa20.HSalsa20(k32, n24)
	assert.ErrorContains(t, err, "nonce size")

	var in, out [64]byte
	assert.Panics(t, func() { salsa20.Core(&out, &in, 10) })
	assert.Equal(t, [64]byte{}, out)
}

// TestCounterCarry checks that the 64-bit block counter carries from word
// 8 into word 9 in the middle of a call, with block 2^32 reached either
// way, and that the stream stops (panicking before writing) only at the
// end of the 2^64-block space.
func TestCounterCarry(t *testing.T) {
	r := testutil.Rand(t)
	family.ForEachKernel(t, func(t *testing.T) {
		for _, v := range family.Variants {
			key, nonce := testutil.Bytes(r, v.KeySize), testutil.Bytes(r, v.NonceSize)
			c := mustCipher(t, key, nonce, v.Rounds)
			c.SetCounter(1<<32 - 2)
			across := streamtest.Keystream(c, 5*64)

			c.SetCounter(1 << 32)
			require.Equal(t, across[128:192], streamtest.Keystream(c, 64), v.Name)
			require.NotEqual(t, across[128:192], streamtest.Keystream(mustCipher(t, key, nonce, v.Rounds), 64), "%s: block 2^32 must not repeat block 0", v.Name)
			if v.NonceSize == salsa20.NonceSize {
				require.Equal(t, refStream(key, nonce, 1<<32-2, 0, v.Rounds, 5*64), across, v.Name)
			}

			c.SetCounter(1<<64 - 1)
			buf := make([]byte, 65)
			require.PanicsWithValue(t, "salsa20: counter overflow", func() { c.XORKeyStream(buf, buf) }, v.Name)
			require.Equal(t, make([]byte, 65), buf)
			last := append(streamtest.Keystream(c, 1), streamtest.Keystream(c, 63)...)
			if v.NonceSize == salsa20.NonceSize {
				require.Equal(t, refStream(key, nonce, 1<<64-1, 0, v.Rounds, 64), last, v.Name)
			}
			require.PanicsWithValue(t, "salsa20: counter overflow", func() { streamtest.Keystream(c, 1) }, v.Name)
		}
	})
}

// TestSeekEqualsDiscarding: Seek agrees with discarding and with
// SetCounter (streamtest.SeekEqualsDiscarding).
func TestSeekEqualsDiscarding(t *testing.T) { streamtest.SeekEqualsDiscarding(t, family) }

// TestSetCounter checks that SetCounter matches x/crypto's counter input,
// moves backwards as well as forwards, and discards buffered key stream
// (streamtest.SetCounter, on Salsa20/20).
func TestSetCounter(t *testing.T) {
	streamtest.SetCounter(t, family, []uint64{7, 3, 0, 1<<32 - 1, 1 << 40, 1}, func(_ *testing.T, key, nonce []byte, counter uint64, n int) []byte {
		want := make([]byte, n)
		xcryptoStream(key, nonce, counter, want, make([]byte, n))
		return want
	})
}

// TestZeroAllocs checks that XORKeyStream, Seek (streamtest.ZeroAllocs)
// and Core allocate nothing.
func TestZeroAllocs(t *testing.T) {
	streamtest.ZeroAllocs(t, family)
	var in, out [64]byte
	assert.Zero(t, testing.AllocsPerRun(20, func() { salsa20.Core(&out, &in, 8) }), "Core")
}

// TestKernelName: Kernel names the best kernel (streamtest.KernelName).
func TestKernelName(t *testing.T) { streamtest.KernelName(t, family) }
