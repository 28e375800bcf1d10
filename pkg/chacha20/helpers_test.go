package chacha20_test

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/spipe-dev/spipe/internal/chachacore"
	"github.com/spipe-dev/spipe/pkg/chacha20"
	"github.com/stretchr/testify/require"
)

// forEachKernel runs f once per ChaCha kernel this CPU supports, so every
// test that uses it covers every code path (kernels added later are picked
// up automatically). Not parallel: the kernel switch is process-global.
func forEachKernel(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	names := chachacore.Kernels()
	require.NotEmpty(t, names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			restore, err := chachacore.UseKernel(name)
			require.NoError(t, err)
			defer restore()
			require.Equal(t, name, chacha20.Kernel())
			f(t)
		})
	}
}

// mustCipher builds a cipher the test expects to be valid.
func mustCipher(t testing.TB, key, nonce []byte, rounds int) *chacha20.Cipher {
	t.Helper()
	c, err := chacha20.NewWithRounds(key, nonce, rounds)
	require.NoError(t, err)
	return c
}

// keystream returns n bytes of c's key stream from its current position.
func keystream(c *chacha20.Cipher, n int) []byte {
	b := make([]byte, n)
	c.XORKeyStream(b, b)
	return b
}

// xorInChunks XORs src into dst through c in consecutive calls whose
// lengths r picks (from 0 up to a few blocks), ending with whatever is
// left; it must give the same bytes as a single call.
func xorInChunks(r *rand.Rand, c interface{ XORKeyStream(dst, src []byte) }, dst, src []byte) {
	for len(src) > 0 {
		n := min(len(src), r.IntN(3*chacha20.BlockSize+2))
		c.XORKeyStream(dst[:n], src[:n])
		dst, src = dst[n:], src[n:]
	}
}

// refBlock is an independent, deliberately plain ChaCha block function
// written from the papers for this test (no shared code with chachacore):
// the state is built word by word, the rounds use an index table, and the
// feed-forward is a separate pass. djb selects the original layout (64-bit
// counter in words 12-13, 8-byte nonce) over RFC 8439's (32-bit counter,
// 12-byte nonce). A 16-byte key uses "expand 16-byte k" and repeats.
func refBlock(key, nonce []byte, counter uint64, rounds int) [64]byte {
	var x [16]uint32
	if len(key) == 16 {
		copy(x[:4], []uint32{0x61707865, 0x3120646e, 0x79622d36, 0x6b206574})
		key = append(append([]byte{}, key...), key...)
	} else {
		copy(x[:4], []uint32{0x61707865, 0x3320646e, 0x79622d32, 0x6b206574})
	}
	for i := range 8 {
		x[4+i] = binary.LittleEndian.Uint32(key[4*i:])
	}
	switch len(nonce) {
	case 8:
		x[12], x[13] = uint32(counter), uint32(counter>>32)
		x[14] = binary.LittleEndian.Uint32(nonce[0:])
		x[15] = binary.LittleEndian.Uint32(nonce[4:])
	case 12:
		x[12] = uint32(counter)
		for i := range 3 {
			x[13+i] = binary.LittleEndian.Uint32(nonce[4*i:])
		}
	default:
		panic("refBlock: nonce must be 8 or 12 bytes")
	}
	in := x
	qr := [8][4]int{
		{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15},
		{0, 5, 10, 15}, {1, 6, 11, 12}, {2, 7, 8, 13}, {3, 4, 9, 14},
	}
	for r := 0; r < rounds; r++ {
		for _, q := range qr[4*(r%2) : 4*(r%2)+4] {
			a, b, c, d := q[0], q[1], q[2], q[3]
			x[a] += x[b]
			x[d] = bits.RotateLeft32(x[d]^x[a], 16)
			x[c] += x[d]
			x[b] = bits.RotateLeft32(x[b]^x[c], 12)
			x[a] += x[b]
			x[d] = bits.RotateLeft32(x[d]^x[a], 8)
			x[c] += x[d]
			x[b] = bits.RotateLeft32(x[b]^x[c], 7)
		}
	}
	var out [64]byte
	for i := range x {
		binary.LittleEndian.PutUint32(out[4*i:], x[i]+in[i])
	}
	return out
}

// refStream returns n bytes of refBlock key stream starting at byte offset
// of block counter (the block number wraps modulo 2^64, and modulo 2^32 for
// a 12-byte nonce, as the specifications' counters do).
func refStream(key, nonce []byte, counter, offset uint64, rounds, n int) []byte {
	out := make([]byte, 0, n+128)
	block := counter + offset/64
	skip := int(offset % 64)
	for len(out) < n+skip {
		ctr := block
		if len(nonce) == 12 {
			ctr = uint64(uint32(ctr))
		}
		b := refBlock(key, nonce, ctr, rounds)
		out = append(out, b[:]...)
		block++
	}
	return out[skip : skip+n]
}
