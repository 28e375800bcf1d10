package chacha20_test

import (
	"encoding/binary"

	"github.com/spipe-dev/spipe/internal/chachacore"
	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
	"github.com/spipe-dev/spipe/internal/testutil/refcrypto"
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

// refBlock is refcrypto's independent, deliberately plain ChaCha block
// function (no shared code with chachacore; held to the external vectors
// there) in the layout the nonce's size selects: the original (64-bit
// counter in words 12-13, 8-byte nonce) or RFC 8439's (32-bit counter,
// 12-byte nonce). A 16-byte key uses "expand 16-byte k" and repeats.
func refBlock(key, nonce []byte, counter uint64, rounds int) [64]byte {
	var tail [16]byte
	switch len(nonce) {
	case 8:
		binary.LittleEndian.PutUint64(tail[:8], counter)
	case 12:
		binary.LittleEndian.PutUint32(tail[:4], uint32(counter))
	default:
		panic("refBlock: nonce must be 8 or 12 bytes")
	}
	copy(tail[16-len(nonce):], nonce)
	return refcrypto.ChaChaBlock(key, &tail, rounds)
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
