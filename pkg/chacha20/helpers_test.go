package chacha20_test

import (
	"encoding/binary"
	"math/bits"

	"github.com/spipe-dev/spipe/internal/chachacore"
	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
	"github.com/spipe-dev/spipe/internal/testutil/streamtest"
	"github.com/spipe-dev/spipe/pkg/chacha20"
)

// family is this package as the shared stream suites see it: the nonce
// sizes and round counts the behaviour tests cover (the first, RFC 8439
// ChaCha20, is the one the single-variant checks use).
var family = streamtest.Family{
	Name: "chacha20",
	New:  streamtest.Constructor(chacha20.NewUnauthenticatedCipherWithRounds),
	Variants: []streamtest.Variant{
		{Name: "ietf", KeySize: chacha20.KeySize, NonceSize: chacha20.NonceSize, Rounds: 20, CounterBits: 32},
		{Name: "xchacha20", KeySize: chacha20.KeySize, NonceSize: chacha20.NonceSizeX, Rounds: 20, CounterBits: 32},
		{Name: "djb", KeySize: chacha20.KeySize, NonceSize: chacha20.NonceSizeDJB, Rounds: 20, CounterBits: 64},
		{Name: "djb-128-bit-key", KeySize: chacha20.KeySize128, NonceSize: chacha20.NonceSizeDJB, Rounds: 20, CounterBits: 64},
		{Name: "chacha12", KeySize: chacha20.KeySize, NonceSize: chacha20.NonceSizeDJB, Rounds: 12, CounterBits: 64},
		{Name: "chacha8", KeySize: chacha20.KeySize, NonceSize: chacha20.NonceSizeDJB, Rounds: 8, CounterBits: 64},
		{Name: "ietf-8-rounds", KeySize: chacha20.KeySize, NonceSize: chacha20.NonceSize, Rounds: 8, CounterBits: 32},
		{Name: "xchacha12", KeySize: chacha20.KeySize, NonceSize: chacha20.NonceSizeX, Rounds: 12, CounterBits: 32},
	},
	Kernels: kerneltest.Switch{Kernels: chachacore.Kernels, Use: chachacore.UseKernel, Active: chacha20.Kernel},
}

// mustCipher builds a cipher the test expects to be valid.
var mustCipher = streamtest.Must(chacha20.NewUnauthenticatedCipherWithRounds)

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
