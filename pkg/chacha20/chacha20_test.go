package chacha20_test

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/streamtest"
	"github.com/spipe-dev/spipe/pkg/chacha20"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	xchacha "golang.org/x/crypto/chacha20"
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
// refused with an error naming the problem (and never a cipher).
func TestConstructorErrors(t *testing.T) {
	k32, k16 := make([]byte, 32), make([]byte, 16)
	n8, n12, n24 := make([]byte, 8), make([]byte, 12), make([]byte, 24)
	for _, tc := range []struct {
		name       string
		key, nonce []byte
		rounds     int
		want       string
	}{
		{"key 31", make([]byte, 31), n12, 20, "key size"},
		{"key 33", make([]byte, 33), n12, 20, "key size"},
		{"key 0", nil, n8, 20, "key size"},
		{"16-byte key with 12-byte nonce", k16, n12, 20, "key size"},
		{"16-byte key with 24-byte nonce", k16, n24, 20, "key size"},
		{"nonce 0", k32, nil, 20, "nonce size"},
		{"nonce 16", k32, make([]byte, 16), 20, "nonce size"},
		{"nonce 25", k32, make([]byte, 25), 20, "nonce size"},
		{"rounds 0", k32, n12, 0, "round"},
		{"rounds 10", k32, n12, 10, "round"},
		{"rounds 21", k32, n8, 21, "round"},
		{"rounds -20", k32, n24, -20, "round"},
	} {
		c, err := chacha20.NewUnauthenticatedCipherWithRounds(tc.key, tc.nonce, tc.rounds)
		assert.Nil(t, c, tc.name)
		if assert.Error(t, err, tc.name) {
			assert.Contains(t, err.Error(), tc.want, tc.name)
			assert.Contains(t, err.Error(), "chacha20:", tc.name)
		}
	}
	// NewUnauthenticatedCipher is the 20-round cipher of
	// NewUnauthenticatedCipherWithRounds, for the same keys and nonces (as
	// in pkg/salsa20): the same key stream, and the same refusals.
	for _, kn := range [][2][]byte{{k16, n8}, {k32, n8}, {k32, n12}, {k32, n24}} {
		key, nonce := kn[0], kn[1]
		c, err := chacha20.NewUnauthenticatedCipher(key, nonce)
		require.NoError(t, err, "key %d nonce %d", len(key), len(nonce))
		assert.Equal(t, streamtest.Keystream(mustCipher(t, key, nonce, 20), 200), streamtest.Keystream(c, 200))
	}
	for _, kn := range [][2][]byte{{k16, n12}, {k16, n24}, {k32, nil}, {make([]byte, 31), n12}} {
		c, err := chacha20.NewUnauthenticatedCipher(kn[0], kn[1])
		assert.Nil(t, c)
		assert.Error(t, err)
	}
	_, err := chacha20.NewUnauthenticatedCipherWithRounds(k16, n8, 8)
	assert.NoError(t, err)

	_, err = chacha20.HChaCha20(make([]byte, 31), make([]byte, 16))
	assert.ErrorContains(t, err, "key size")
	_, err = chacha20.HChaCha20(k32, make([]byte, 24))
	assert.ErrorContains(t, err, "nonce size")
}

// TestIETFCounterOverflow checks that the 32-bit counter of RFC 8439 and
// XChaCha20 panics rather than wrap to block 0, and before writing
// anything: at block 2^32-1 one block may still be produced, more may not.
func TestIETFCounterOverflow(t *testing.T) {
	family.ForEachKernel(t, func(t *testing.T) {
		for _, nonceSize := range []int{chacha20.NonceSize, chacha20.NonceSizeX} {
			key, nonce := make([]byte, 32), make([]byte, nonceSize)
			newAtLast := func() *chacha20.Cipher {
				c := mustCipher(t, key, nonce, 20)
				c.SetCounter(1<<32 - 1)
				return c
			}
			x, err := xchacha.NewUnauthenticatedCipher(key, nonce)
			require.NoError(t, err)
			x.SetCounter(1<<32 - 1)
			lastBlock := keystreamX(x, 64)

			// More than one block at once: refused whole.
			for _, n := range []int{65, 128, 1000, 70000} {
				c := newAtLast()
				buf := make([]byte, n)
				require.PanicsWithValue(t, "chacha20: counter overflow", func() { c.XORKeyStream(buf, buf) }, "%d bytes", n)
				require.Equal(t, make([]byte, n), buf, "nothing written (%d bytes)", n)
				// The refusal left the stream where it was.
				require.Equal(t, lastBlock, streamtest.Keystream(c, 64))
			}

			// The last block in pieces, then not one byte more.
			c := newAtLast()
			got := append(streamtest.Keystream(c, 10), streamtest.Keystream(c, 54)...)
			require.Equal(t, lastBlock, got)
			one := []byte{0}
			require.PanicsWithValue(t, "chacha20: counter overflow", func() { c.XORKeyStream(one, one) })
			require.Equal(t, []byte{0}, one)
			c.XORKeyStream(nil, nil) // empty calls stay harmless

			// SetCounter(2^32) is the end of the stream; beyond is refused.
			c.SetCounter(1 << 32)
			require.PanicsWithValue(t, "chacha20: counter overflow", func() { c.XORKeyStream(one, one) })
			require.Panics(t, func() { c.SetCounter(1<<32 + 1) })
			require.Panics(t, func() { c.Seek(1<<38 + 1) })
			c.Seek(1<<38 - 1)
			require.Equal(t, lastBlock[63:], streamtest.Keystream(c, 1))
		}
	})
}

// TestDJBCounterCarry checks that the 8-byte-nonce variant carries its
// 64-bit counter from word 12 into word 13 (block 2^32 is x/crypto's block
// 0 with high word 1 in front of the nonce) and stops only at the end of
// the 2^64-block space.
func TestDJBCounterCarry(t *testing.T) {
	r := testutil.Rand(t)
	family.ForEachKernel(t, func(t *testing.T) {
		key, nonce := testutil.Bytes(r, 32), testutil.Bytes(r, 8)
		c := mustCipher(t, key, nonce, 20)
		c.SetCounter(1<<32 - 2)
		got := streamtest.Keystream(c, 5*64)
		want := xcryptoDJB(t, key, nonce, 1<<32-2, 0, 5*64)
		require.Equal(t, want, got)

		// The same blocks reached by SetCounter after the carry.
		c.SetCounter(1 << 32)
		require.Equal(t, want[128:192], streamtest.Keystream(c, 64))
		require.NotEqual(t, want[128:192], streamtest.Keystream(mustCipher(t, key, nonce, 20), 64), "block 2^32 must not repeat block 0")

		// The very last block of the 2^64 space, then overflow.
		c.SetCounter(1<<64 - 1)
		buf := make([]byte, 65)
		require.PanicsWithValue(t, "chacha20: counter overflow", func() { c.XORKeyStream(buf, buf) })
		require.Equal(t, make([]byte, 65), buf)
		last := streamtest.Keystream(c, 64)
		require.Equal(t, refStream(key, nonce, 1<<64-1, 0, 20, 64), last)
		require.PanicsWithValue(t, "chacha20: counter overflow", func() { streamtest.Keystream(c, 1) })
	})
}

// TestSeekEqualsDiscarding: Seek agrees with discarding and with
// SetCounter (streamtest.SeekEqualsDiscarding).
func TestSeekEqualsDiscarding(t *testing.T) { streamtest.SeekEqualsDiscarding(t, family) }

// TestSetCounter checks that SetCounter matches x/crypto's SetCounter,
// moves backwards as well as forwards, and discards buffered key stream
// (streamtest.SetCounter, on RFC 8439 ChaCha20).
func TestSetCounter(t *testing.T) {
	streamtest.SetCounter(t, family, []uint64{7, 3, 0, 1 << 31, 1, 1<<32 - 5}, func(t *testing.T, key, nonce []byte, counter uint64, n int) []byte {
		x, err := xchacha.NewUnauthenticatedCipher(key, nonce)
		require.NoError(t, err)
		x.SetCounter(uint32(counter))
		return keystreamX(x, n)
	})
}

// TestZeroAllocs checks that XORKeyStream allocates nothing, for partial
// blocks, whole blocks and long messages, and Seek neither
// (streamtest.ZeroAllocs).
func TestZeroAllocs(t *testing.T) { streamtest.ZeroAllocs(t, family) }

// TestKernelName: Kernel names the best kernel (streamtest.KernelName).
func TestKernelName(t *testing.T) { streamtest.KernelName(t, family) }
