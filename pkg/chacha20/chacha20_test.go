package chacha20_test

import (
	"bytes"
	"testing"

	"github.com/spipe-dev/spipe/internal/chachacore"
	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/pkg/chacha20"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	xchacha "golang.org/x/crypto/chacha20"
)

// variants are the nonce sizes and round counts the behaviour tests cover.
var variants = []struct {
	name   string
	key    int
	nonce  int
	rounds int
}{
	{"ietf", chacha20.KeySize, chacha20.NonceSize, 20},
	{"xchacha20", chacha20.KeySize, chacha20.NonceSizeX, 20},
	{"djb", chacha20.KeySize, chacha20.NonceSizeDJB, 20},
	{"djb-128-bit-key", chacha20.KeySize128, chacha20.NonceSizeDJB, 20},
	{"chacha12", chacha20.KeySize, chacha20.NonceSizeDJB, 12},
	{"chacha8", chacha20.KeySize, chacha20.NonceSizeDJB, 8},
	{"ietf-8-rounds", chacha20.KeySize, chacha20.NonceSize, 8},
	{"xchacha12", chacha20.KeySize, chacha20.NonceSizeX, 12},
}

// TestChunkingInvariance checks that any split of a message into
// XORKeyStream calls, including empty calls, gives the bytes of one call.
func TestChunkingInvariance(t *testing.T) {
	r := testutil.Rand(t)
	forEachKernel(t, func(t *testing.T) {
		for _, v := range variants {
			key, nonce := testutil.Bytes(r, v.key), testutil.Bytes(r, v.nonce)
			src := testutil.Bytes(r, 5000)
			want := make([]byte, len(src))
			mustCipher(t, key, nonce, v.rounds).XORKeyStream(want, src)
			for range 20 {
				got := make([]byte, len(src))
				xorInChunks(r, mustCipher(t, key, nonce, v.rounds), got, src)
				require.Equal(t, want, got, v.name)
			}
			// Byte at a time, with an empty call between bytes.
			c := mustCipher(t, key, nonce, v.rounds)
			got := make([]byte, 300)
			for i := range got {
				c.XORKeyStream(got[i:i+1], src[i:i+1])
				c.XORKeyStream(nil, nil)
			}
			require.Equal(t, want[:300], got, "%s: byte at a time", v.name)
		}
	})
}

// TestInPlace checks that dst == src encrypts in place, across partial
// blocks, and that decrypting in place restores the message.
func TestInPlace(t *testing.T) {
	r := testutil.Rand(t)
	forEachKernel(t, func(t *testing.T) {
		for _, v := range variants {
			key, nonce := testutil.Bytes(r, v.key), testutil.Bytes(r, v.nonce)
			msg := testutil.Bytes(r, 1000)
			want := make([]byte, len(msg))
			mustCipher(t, key, nonce, v.rounds).XORKeyStream(want, msg)

			buf := bytes.Clone(msg)
			xorInChunks(r, mustCipher(t, key, nonce, v.rounds), buf, buf)
			require.Equal(t, want, buf, v.name)
			mustCipher(t, key, nonce, v.rounds).XORKeyStream(buf, buf)
			require.Equal(t, msg, buf, "%s: decrypt", v.name)
		}
	})
}

// TestMisusePanics checks that inexact overlap and a short dst panic with
// the package's message before anything is written or the stream moves.
func TestMisusePanics(t *testing.T) {
	key, nonce := make([]byte, 32), make([]byte, 12)
	for _, tc := range []struct {
		name     string
		dst, src func(buf []byte) []byte
		msg      string
	}{
		{"dst one byte ahead", func(b []byte) []byte { return b[1:101] }, func(b []byte) []byte { return b[:100] }, "chacha20: invalid buffer overlap"},
		{"dst one byte behind", func(b []byte) []byte { return b[:100] }, func(b []byte) []byte { return b[1:101] }, "chacha20: invalid buffer overlap"},
		{"dst ends inside src", func(b []byte) []byte { return b[0:70] }, func(b []byte) []byte { return b[64:134] }, "chacha20: invalid buffer overlap"},
		{"short dst", func(b []byte) []byte { return b[200:299] }, func(b []byte) []byte { return b[:100] }, "chacha20: output smaller than input"},
		{"nil dst", func([]byte) []byte { return nil }, func(b []byte) []byte { return b[:1] }, "chacha20: output smaller than input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustCipher(t, key, nonce, 20)
			buf := make([]byte, 300)
			require.PanicsWithValue(t, tc.msg, func() { c.XORKeyStream(tc.dst(buf), tc.src(buf)) })
			assert.Equal(t, make([]byte, 300), buf, "nothing written")
			// The stream did not move: it still starts at byte 0.
			assert.Equal(t, keystream(mustCipher(t, key, nonce, 20), 64), keystream(c, 64))
		})
	}
	// A longer dst is fine: only len(src) bytes are written.
	c := mustCipher(t, key, nonce, 20)
	dst := make([]byte, 10)
	c.XORKeyStream(dst, make([]byte, 5))
	assert.Equal(t, make([]byte, 5), dst[5:])
	assert.Equal(t, keystream(mustCipher(t, key, nonce, 20), 5), dst[:5])
}

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
		c, err := chacha20.NewWithRounds(tc.key, tc.nonce, tc.rounds)
		assert.Nil(t, c, tc.name)
		if assert.Error(t, err, tc.name) {
			assert.Contains(t, err.Error(), tc.want, tc.name)
			assert.Contains(t, err.Error(), "chacha20:", tc.name)
		}
	}
	// NewUnauthenticatedCipher is ChaCha20 with a 256-bit key only.
	_, err := chacha20.NewUnauthenticatedCipher(k16, n8)
	assert.ErrorContains(t, err, "key size")
	for _, n := range [][]byte{n8, n12, n24} {
		_, err := chacha20.NewUnauthenticatedCipher(k32, n)
		assert.NoError(t, err)
	}
	_, err = chacha20.NewWithRounds(k16, n8, 8)
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
	forEachKernel(t, func(t *testing.T) {
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
				require.Equal(t, lastBlock, keystream(c, 64))
			}

			// The last block in pieces, then not one byte more.
			c := newAtLast()
			got := append(keystream(c, 10), keystream(c, 54)...)
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
			require.Equal(t, lastBlock[63:], keystream(c, 1))
		}
	})
}

// TestDJBCounterCarry checks that the 8-byte-nonce variant carries its
// 64-bit counter from word 12 into word 13 (block 2^32 is x/crypto's block
// 0 with high word 1 in front of the nonce) and stops only at the end of
// the 2^64-block space.
func TestDJBCounterCarry(t *testing.T) {
	r := testutil.Rand(t)
	forEachKernel(t, func(t *testing.T) {
		key, nonce := testutil.Bytes(r, 32), testutil.Bytes(r, 8)
		c := mustCipher(t, key, nonce, 20)
		c.SetCounter(1<<32 - 2)
		got := keystream(c, 5*64)
		want := xcryptoDJB(t, key, nonce, 1<<32-2, 0, 5*64)
		require.Equal(t, want, got)

		// The same blocks reached by SetCounter after the carry.
		c.SetCounter(1 << 32)
		require.Equal(t, want[128:192], keystream(c, 64))
		require.NotEqual(t, want[128:192], keystream(mustCipher(t, key, nonce, 20), 64), "block 2^32 must not repeat block 0")

		// The very last block of the 2^64 space, then overflow.
		c.SetCounter(1<<64 - 1)
		buf := make([]byte, 65)
		require.PanicsWithValue(t, "chacha20: counter overflow", func() { c.XORKeyStream(buf, buf) })
		require.Equal(t, make([]byte, 65), buf)
		last := keystream(c, 64)
		require.Equal(t, refStream(key, nonce, 1<<64-1, 0, 20, 64), last)
		require.PanicsWithValue(t, "chacha20: counter overflow", func() { keystream(c, 1) })
	})
}

// TestSeekEqualsDiscarding checks that Seek(n) gives the key stream a
// fresh cipher gives after discarding n bytes, for offsets around block
// boundaries and the 64 KiB kernel-call bound, and that huge offsets land
// on the block SetCounter gives.
func TestSeekEqualsDiscarding(t *testing.T) {
	r := testutil.Rand(t)
	forEachKernel(t, func(t *testing.T) {
		for _, v := range variants {
			key, nonce := testutil.Bytes(r, v.key), testutil.Bytes(r, v.nonce)
			long := keystream(mustCipher(t, key, nonce, v.rounds), 70000)
			offsets := []int{0, 1, 63, 64, 65, 127, 128, 1000, 4095, 65535, 65536, 65537, 69000}
			for range 10 {
				offsets = append(offsets, r.IntN(69000))
			}
			for _, off := range offsets {
				c := mustCipher(t, key, nonce, v.rounds)
				keystream(c, 3) // Seek must discard the buffered block
				c.Seek(uint64(off))
				require.Equal(t, long[off:off+1000], keystream(c, 1000)[:1000], "%s: offset %d", v.name, off)
			}

			// Huge offsets: the block SetCounter reaches, then the bytes
			// within it.
			maxBlock := uint64(1<<32 - 1)
			if v.nonce == chacha20.NonceSizeDJB {
				maxBlock = 1<<58 - 1
			}
			for _, block := range []uint64{maxBlock, maxBlock - 1, r.Uint64N(maxBlock), 1<<32 - 1} {
				within := uint64(r.IntN(64))
				ref := mustCipher(t, key, nonce, v.rounds)
				ref.SetCounter(block)
				want := keystream(ref, 64)

				c := mustCipher(t, key, nonce, v.rounds)
				c.Seek(block*64 + within)
				require.Equal(t, want[within:], keystream(c, 64-int(within)), "%s: block %#x + %d", v.name, block, within)
			}
		}
	})
}

// TestSetCounter checks that SetCounter matches x/crypto's SetCounter,
// moves backwards as well as forwards, and discards buffered key stream.
func TestSetCounter(t *testing.T) {
	r := testutil.Rand(t)
	forEachKernel(t, func(t *testing.T) {
		key, nonce := testutil.Bytes(r, 32), testutil.Bytes(r, 12)
		c := mustCipher(t, key, nonce, 20)
		for _, n := range []uint32{7, 3, 0, 1 << 31, 1, 1<<32 - 5} {
			keystream(c, r.IntN(200)) // leave something buffered
			c.SetCounter(uint64(n))
			x, err := xchacha.NewUnauthenticatedCipher(key, nonce)
			require.NoError(t, err)
			x.SetCounter(n)
			require.Equal(t, keystreamX(x, 200), keystream(c, 200), "counter %d", n)
		}
	})
}

// TestZeroAllocs checks that XORKeyStream allocates nothing, for partial
// blocks, whole blocks and long messages.
func TestZeroAllocs(t *testing.T) {
	for _, v := range variants {
		c := mustCipher(t, make([]byte, v.key), make([]byte, v.nonce), v.rounds)
		for _, n := range []int{1, 63, 64, 100, 4096, 100000} {
			buf := make([]byte, n)
			allocs := testing.AllocsPerRun(20, func() { c.XORKeyStream(buf, buf) })
			assert.Zero(t, allocs, "%s, %d bytes", v.name, n)
		}
		allocs := testing.AllocsPerRun(20, func() { c.Seek(12345) })
		assert.Zero(t, allocs, "%s: Seek", v.name)
	}
}

// TestKernelName checks that Kernel names the best kernel this CPU runs
// (the first of chachacore.Kernels, which ends with "generic").
func TestKernelName(t *testing.T) {
	kernels := chachacore.Kernels()
	require.NotEmpty(t, kernels)
	assert.Equal(t, kernels[0], chacha20.Kernel())
	assert.Equal(t, "generic", kernels[len(kernels)-1])
}
