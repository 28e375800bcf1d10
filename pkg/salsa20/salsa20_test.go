package salsa20_test

import (
	"bytes"
	"testing"

	"github.com/spipe-dev/spipe/internal/salsacore"
	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/pkg/salsa20"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// variants are the key sizes, nonce sizes and round counts the behaviour
// tests cover.
var variants = []struct {
	name   string
	key    int
	nonce  int
	rounds int
}{
	{"salsa20", salsa20.KeySize, salsa20.NonceSize, 20},
	{"xsalsa20", salsa20.KeySize, salsa20.NonceSizeX, 20},
	{"salsa20-128-bit-key", salsa20.KeySize128, salsa20.NonceSize, 20},
	{"salsa20-12", salsa20.KeySize, salsa20.NonceSize, 12},
	{"salsa20-8", salsa20.KeySize, salsa20.NonceSize, 8},
	{"xsalsa20-8", salsa20.KeySize, salsa20.NonceSizeX, 8},
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
	key, nonce := make([]byte, 32), make([]byte, 8)
	for _, tc := range []struct {
		name     string
		dst, src func(buf []byte) []byte
		msg      string
	}{
		{"dst one byte ahead", func(b []byte) []byte { return b[1:101] }, func(b []byte) []byte { return b[:100] }, "salsa20: invalid buffer overlap"},
		{"dst one byte behind", func(b []byte) []byte { return b[:100] }, func(b []byte) []byte { return b[1:101] }, "salsa20: invalid buffer overlap"},
		{"dst ends inside src", func(b []byte) []byte { return b[0:70] }, func(b []byte) []byte { return b[64:134] }, "salsa20: invalid buffer overlap"},
		{"short dst", func(b []byte) []byte { return b[200:299] }, func(b []byte) []byte { return b[:100] }, "salsa20: output smaller than input"},
		{"nil dst", func([]byte) []byte { return nil }, func(b []byte) []byte { return b[:1] }, "salsa20: output smaller than input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustCipher(t, key, nonce, 20)
			buf := make([]byte, 300)
			require.PanicsWithValue(t, tc.msg, func() { c.XORKeyStream(tc.dst(buf), tc.src(buf)) })
			assert.Equal(t, make([]byte, 300), buf, "nothing written")
			assert.Equal(t, keystream(mustCipher(t, key, nonce, 20), 64), keystream(c, 64), "stream did not move")
		})
	}
	c := mustCipher(t, key, nonce, 20)
	dst := make([]byte, 10)
	c.XORKeyStream(dst, make([]byte, 5))
	assert.Equal(t, make([]byte, 5), dst[5:], "only len(src) bytes written")
	assert.Equal(t, keystream(mustCipher(t, key, nonce, 20), 5), dst[:5])
}

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
		c, err := salsa20.NewWithRounds(tc.key, tc.nonce, tc.rounds)
		assert.Nil(t, c, tc.name)
		if assert.Error(t, err, tc.name) {
			assert.Contains(t, err.Error(), tc.want, tc.name)
			assert.Contains(t, err.Error(), "salsa20:", tc.name)
		}
	}
	for _, k := range [][]byte{k16, k32} {
		_, err := salsa20.NewCipher(k, n8)
		assert.NoError(t, err)
	}
	_, err := salsa20.NewCipher(k32, n24)
	assert.NoError(t, err)

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
	forEachKernel(t, func(t *testing.T) {
		for _, v := range variants {
			key, nonce := testutil.Bytes(r, v.key), testutil.Bytes(r, v.nonce)
			c := mustCipher(t, key, nonce, v.rounds)
			c.SetCounter(1<<32 - 2)
			across := keystream(c, 5*64)

			c.SetCounter(1 << 32)
			require.Equal(t, across[128:192], keystream(c, 64), v.name)
			require.NotEqual(t, across[128:192], keystream(mustCipher(t, key, nonce, v.rounds), 64), "%s: block 2^32 must not repeat block 0", v.name)
			if v.nonce == salsa20.NonceSize {
				require.Equal(t, refStream(key, nonce, 1<<32-2, 0, v.rounds, 5*64), across, v.name)
			}

			c.SetCounter(1<<64 - 1)
			buf := make([]byte, 65)
			require.PanicsWithValue(t, "salsa20: counter overflow", func() { c.XORKeyStream(buf, buf) }, v.name)
			require.Equal(t, make([]byte, 65), buf)
			last := append(keystream(c, 1), keystream(c, 63)...)
			if v.nonce == salsa20.NonceSize {
				require.Equal(t, refStream(key, nonce, 1<<64-1, 0, v.rounds, 64), last, v.name)
			}
			require.PanicsWithValue(t, "salsa20: counter overflow", func() { keystream(c, 1) }, v.name)
		}
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
				require.Equal(t, long[off:off+1000], keystream(c, 1000), "%s: offset %d", v.name, off)
			}
			for _, block := range []uint64{1<<58 - 1, 1<<32 - 1, 1 << 32, r.Uint64N(1 << 58)} {
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

// TestSetCounter checks that SetCounter matches x/crypto's counter input,
// moves backwards as well as forwards, and discards buffered key stream.
func TestSetCounter(t *testing.T) {
	r := testutil.Rand(t)
	forEachKernel(t, func(t *testing.T) {
		key, nonce := testutil.Bytes(r, 32), testutil.Bytes(r, 8)
		c := mustCipher(t, key, nonce, 20)
		for _, n := range []uint64{7, 3, 0, 1<<32 - 1, 1 << 40, 1} {
			keystream(c, r.IntN(200)) // leave something buffered
			c.SetCounter(n)
			want := make([]byte, 200)
			xcryptoStream(key, nonce, n, want, make([]byte, 200))
			require.Equal(t, want, keystream(c, 200), "counter %d", n)
		}
	})
}

// TestZeroAllocs checks that XORKeyStream and Seek allocate nothing.
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
	var in, out [64]byte
	assert.Zero(t, testing.AllocsPerRun(20, func() { salsa20.Core(&out, &in, 8) }), "Core")
}

// TestKernelName checks that Kernel names the best kernel this CPU runs
// (the first of salsacore.Kernels, which ends with "generic").
func TestKernelName(t *testing.T) {
	kernels := salsacore.Kernels()
	require.NotEmpty(t, kernels)
	assert.Equal(t, kernels[0], salsa20.Kernel())
	assert.Equal(t, "generic", kernels[len(kernels)-1])
}
