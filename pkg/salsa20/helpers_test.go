package salsa20_test

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/spipe-dev/spipe/internal/salsacore"
	"github.com/spipe-dev/spipe/pkg/salsa20"
	"github.com/stretchr/testify/require"
)

// forEachKernel runs f once per Salsa20 kernel this CPU supports, so every
// test that uses it covers every code path (kernels added later are picked
// up automatically). Not parallel: the kernel switch is process-global.
func forEachKernel(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	names := salsacore.Kernels()
	require.NotEmpty(t, names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			restore, err := salsacore.UseKernel(name)
			require.NoError(t, err)
			defer restore()
			require.Equal(t, name, salsa20.Kernel())
			f(t)
		})
	}
}

// mustCipher builds a cipher the test expects to be valid.
func mustCipher(t testing.TB, key, nonce []byte, rounds int) *salsa20.Cipher {
	t.Helper()
	c, err := salsa20.NewWithRounds(key, nonce, rounds)
	require.NoError(t, err)
	return c
}

// keystream returns n bytes of c's key stream from its current position.
func keystream(c *salsa20.Cipher, n int) []byte {
	b := make([]byte, n)
	c.XORKeyStream(b, b)
	return b
}

// xorInChunks XORs src into dst through c in consecutive calls whose
// lengths r picks (from 0 up to a few blocks, or 1/64 of a long src),
// ending with whatever is left; it must give the same bytes as one call.
func xorInChunks(r *rand.Rand, c interface{ XORKeyStream(dst, src []byte) }, dst, src []byte) {
	// Long streams get proportionally longer chunks, so the multi-MiB
	// vectors stay quick under -race while every chunk still starts and
	// ends mid-block.
	maxChunk := max(3*salsa20.BlockSize+2, len(src)/64)
	for len(src) > 0 {
		n := min(len(src), r.IntN(maxChunk))
		c.XORKeyStream(dst[:n], src[:n])
		dst, src = dst[n:], src[n:]
	}
}

// refBlock is an independent, deliberately plain Salsa20 block function
// written from the specification for this test (no shared code with
// salsacore): the input block is laid out word by word, the rounds follow
// the spec's quarterround on an index table, and the feed-forward is a
// separate pass. A 16-byte key uses "expand 16-byte k" and repeats.
func refBlock(key, nonce []byte, counter uint64, rounds int) [64]byte {
	var x [16]uint32
	sigma := []uint32{0x61707865, 0x3320646e, 0x79622d32, 0x6b206574}
	k2 := key[16%len(key):] // the second key half; the same half for 16 bytes
	if len(key) == 16 {
		sigma = []uint32{0x61707865, 0x3120646e, 0x79622d36, 0x6b206574}
		k2 = key
	}
	x[0], x[5], x[10], x[15] = sigma[0], sigma[1], sigma[2], sigma[3]
	for i := range 4 {
		x[1+i] = binary.LittleEndian.Uint32(key[4*i:])
		x[11+i] = binary.LittleEndian.Uint32(k2[4*i:])
	}
	x[6] = binary.LittleEndian.Uint32(nonce[0:])
	x[7] = binary.LittleEndian.Uint32(nonce[4:])
	x[8], x[9] = uint32(counter), uint32(counter>>32)
	in := x
	// Column round, then row round (the spec's quarterround order).
	qr := [8][4]int{
		{0, 4, 8, 12}, {5, 9, 13, 1}, {10, 14, 2, 6}, {15, 3, 7, 11},
		{0, 1, 2, 3}, {5, 6, 7, 4}, {10, 11, 8, 9}, {15, 12, 13, 14},
	}
	for r := 0; r < rounds; r++ {
		for _, q := range qr[4*(r%2) : 4*(r%2)+4] {
			y0, y1, y2, y3 := q[0], q[1], q[2], q[3]
			x[y1] ^= bits.RotateLeft32(x[y0]+x[y3], 7)
			x[y2] ^= bits.RotateLeft32(x[y1]+x[y0], 9)
			x[y3] ^= bits.RotateLeft32(x[y2]+x[y1], 13)
			x[y0] ^= bits.RotateLeft32(x[y3]+x[y2], 18)
		}
	}
	var out [64]byte
	for i := range x {
		binary.LittleEndian.PutUint32(out[4*i:], x[i]+in[i])
	}
	return out
}

// refStream returns n bytes of refBlock key stream from byte skip of block
// counter (an 8-byte nonce; the block number wraps modulo 2^64).
func refStream(key, nonce []byte, counter uint64, skip, rounds, n int) []byte {
	out := make([]byte, 0, n+128)
	for block := counter; len(out) < n+skip; block++ {
		b := refBlock(key, nonce, block, rounds)
		out = append(out, b[:]...)
	}
	return out[skip : skip+n]
}
