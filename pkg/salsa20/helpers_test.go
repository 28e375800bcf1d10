package salsa20_test

import (
	"encoding/binary"
	"math/bits"

	"github.com/spipe-dev/spipe/internal/salsacore"
	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
	"github.com/spipe-dev/spipe/internal/testutil/streamtest"
	"github.com/spipe-dev/spipe/pkg/salsa20"
)

// family is this package as the shared stream suites see it: the key
// sizes, nonce sizes and round counts the behaviour tests cover (the
// first, Salsa20/20, is the one the single-variant checks use).
var family = streamtest.Family{
	Name: "salsa20",
	New:  streamtest.Constructor(salsa20.NewUnauthenticatedCipherWithRounds),
	Variants: []streamtest.Variant{
		{Name: "salsa20", KeySize: salsa20.KeySize, NonceSize: salsa20.NonceSize, Rounds: 20, CounterBits: 64},
		{Name: "xsalsa20", KeySize: salsa20.KeySize, NonceSize: salsa20.NonceSizeX, Rounds: 20, CounterBits: 64},
		{Name: "salsa20-128-bit-key", KeySize: salsa20.KeySize128, NonceSize: salsa20.NonceSize, Rounds: 20, CounterBits: 64},
		{Name: "salsa20-12", KeySize: salsa20.KeySize, NonceSize: salsa20.NonceSize, Rounds: 12, CounterBits: 64},
		{Name: "salsa20-8", KeySize: salsa20.KeySize, NonceSize: salsa20.NonceSize, Rounds: 8, CounterBits: 64},
		{Name: "xsalsa20-8", KeySize: salsa20.KeySize, NonceSize: salsa20.NonceSizeX, Rounds: 8, CounterBits: 64},
	},
	Kernels: kerneltest.Switch{Kernels: salsacore.Kernels, Use: salsacore.UseKernel, Active: salsa20.Kernel},
}

// mustCipher builds a cipher the test expects to be valid.
var mustCipher = streamtest.Must(salsa20.NewUnauthenticatedCipherWithRounds)

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
