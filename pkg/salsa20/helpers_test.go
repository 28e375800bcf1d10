package salsa20_test

import (
	"encoding/binary"

	"github.com/spipe-dev/spipe/internal/salsacore"
	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
	"github.com/spipe-dev/spipe/internal/testutil/refcrypto"
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

// refBlock is refcrypto's independent, deliberately plain Salsa20 block
// function (no shared code with salsacore; held to the external vectors
// there) for an 8-byte nonce and a 64-bit block counter. A 16-byte key
// uses "expand 16-byte k" and repeats.
func refBlock(key, nonce []byte, counter uint64, rounds int) [64]byte {
	var in [16]byte
	copy(in[:8], nonce)
	binary.LittleEndian.PutUint64(in[8:], counter)
	return refcrypto.SalsaBlock(key, &in, rounds)
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
