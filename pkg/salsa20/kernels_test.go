package salsa20_test

import (
	"crypto/subtle"
	"fmt"
	"math"
	"testing"

	"github.com/spipe-dev/spipe/internal/salsacore"
	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/pkg/salsa20"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests drive every SIMD kernel of internal/salsacore through this
// package, the way users reach it, and hold it to the generic kernel: byte
// lengths, start offsets, chunkings, aliasing, alignment and the counter
// carries all pass through the key stream's buffering and the core's
// splitting into the kernels' block counts and counter words.

// variant is one key and nonce shape of Salsa20.
type variant struct {
	name             string
	keyLen, nonceLen int
}

var variants = []variant{
	{"salsa20-256", 32, 8},
	{"salsa20-128", 16, 8},
	{"xsalsa20", 32, 24},
}

// referenceStream returns n bytes of generic key stream from block counter
// start.
func referenceStream(t *testing.T, key, nonce []byte, rounds int, start uint64, n int) []byte {
	t.Helper()
	restore, err := salsacore.UseKernel("generic")
	require.NoError(t, err)
	defer restore()
	ks := make([]byte, n)
	c, err := salsa20.NewUnauthenticatedCipherWithRounds(key, nonce, rounds)
	require.NoError(t, err)
	c.SetCounter(start)
	c.XORKeyStream(ks, ks)
	return ks
}

// xorBytes returns a XOR b.
func xorBytes(a, b []byte) []byte {
	out := make([]byte, len(a))
	subtle.XORBytes(out, a, b)
	return out
}

// TestKernelsEveryLengthAndOffset encrypts every length 0..2048 from offset
// 0 and, for every start offset within a block, a spread of lengths, each
// from a buffer misaligned by the offset, out of place, in every variant
// and round count.
func TestKernelsEveryLengthAndOffset(t *testing.T) {
	const maxLen = 2048
	r := testutil.Rand(t)
	msg := testutil.Bytes(r, maxLen+2*salsa20.BlockSize)
	lengths := []int{0, 1, 15, 63, 64, 65, 127, 128, 191, 256, 257, 511, 512, 700, 1023, 1024, 1025, 1536, 2047, 2048}
	for _, v := range variants {
		key, nonce := testutil.Bytes(r, v.keyLen), testutil.Bytes(r, v.nonceLen)
		for _, rounds := range []int{8, 12, 20} {
			ks := referenceStream(t, key, nonce, rounds, 0, len(msg))
			t.Run(fmt.Sprintf("%s/%d", v.name, rounds), func(t *testing.T) {
				family.ForEachKernel(t, func(t *testing.T) {
					check := func(offset, n int) {
						c, err := salsa20.NewUnauthenticatedCipherWithRounds(key, nonce, rounds)
						require.NoError(t, err)
						c.Seek(uint64(offset))
						buf := make([]byte, n+offset%8+1)
						dst := buf[offset%8+1:] // misaligned by the offset
						c.XORKeyStream(dst, msg[offset:offset+n])
						want := xorBytes(msg[offset:offset+n], ks[offset:offset+n])
						require.Equal(t, want, dst, "offset %d, length %d", offset, n)
					}
					for n := 0; n <= maxLen; n++ {
						check(0, n)
					}
					for offset := 1; offset < salsa20.BlockSize; offset++ {
						for _, n := range lengths {
							check(offset, n)
						}
					}
				})
			})
		}
	}
}

// TestKernelsChunkedInPlace splits a message into random chunks, some of
// them long enough for several vertical batches, encrypting in place from a
// misaligned buffer, and compares with the one-shot generic result.
func TestKernelsChunkedInPlace(t *testing.T) {
	r := testutil.Rand(t)
	const size = 12 << 10
	for _, v := range variants {
		key, nonce := testutil.Bytes(r, v.keyLen), testutil.Bytes(r, v.nonceLen)
		for _, rounds := range []int{8, 12, 20} {
			msg := testutil.Bytes(r, size)
			want := xorBytes(msg, referenceStream(t, key, nonce, rounds, 0, size))
			family.ForEachKernel(t, func(t *testing.T) {
				for trial := range 4 {
					c, err := salsa20.NewUnauthenticatedCipherWithRounds(key, nonce, rounds)
					require.NoError(t, err)
					buf := make([]byte, size+8)
					mis := 1 + trial
					data := buf[mis : mis+size]
					copy(data, msg)
					var cuts []int
					for rest := data; len(rest) > 0; {
						n := min(len(rest), r.IntN(3)*r.IntN(1500)+r.IntN(70))
						if trial == 0 {
							n = min(len(rest), 1+r.IntN(200))
						}
						c.XORKeyStream(rest[:n], rest[:n])
						cuts = append(cuts, n)
						rest = rest[n:]
					}
					require.Equal(t, want, data, "%s/%d, chunks %v", v.name, rounds, cuts)
				}
			})
		}
	}
}

// TestKernelsCounterCarries runs across the wrap of the low counter word at
// 2^32 (the core splits the kernel call and carries into word 9) and up to
// the very last block before 2^64, for every kernel.
func TestKernelsCounterCarries(t *testing.T) {
	r := testutil.Rand(t)
	key, nonce := testutil.Bytes(r, 32), testutil.Bytes(r, 8)
	for _, rounds := range []int{8, 12, 20} {
		for _, back := range []uint64{1, 2, 3, 5, 8, 15, 16, 17, 33} {
			for _, start := range []uint64{1<<32 - back, math.MaxUint64 - back + 1} {
				n := int(back)*salsa20.BlockSize + 40
				if start > 1<<33 {
					n = int(back) * salsa20.BlockSize // up to the last block
				}
				ks := referenceStream(t, key, nonce, rounds, start, n)
				msg := testutil.Bytes(r, n)
				family.ForEachKernel(t, func(t *testing.T) {
					c, err := salsa20.NewUnauthenticatedCipherWithRounds(key, nonce, rounds)
					require.NoError(t, err)
					c.SetCounter(start)
					dst := make([]byte, n)
					c.XORKeyStream(dst, msg)
					assert.Equal(t, xorBytes(msg, ks), dst, "rounds %d from block %#x", rounds, start)
					if start > 1<<33 {
						assert.Panics(t, func() { c.XORKeyStream(dst[:1], msg[:1]) }, "past block 2^64-1")
					}
				})
			}
		}
	}
}

// TestKernelsAllocateNothing: the kernels run on caller memory only.
func TestKernelsAllocateNothing(t *testing.T) {
	key := make([]byte, 32)
	nonce := make([]byte, 8)
	buf := make([]byte, 5000)
	family.ForEachKernel(t, func(t *testing.T) {
		c, err := salsa20.NewUnauthenticatedCipher(key, nonce)
		require.NoError(t, err)
		for _, n := range []int{1, 64, 100, 1024, 5000} {
			allocs := testing.AllocsPerRun(20, func() { c.XORKeyStream(buf[:n], buf[:n]) })
			assert.Zero(t, allocs, "%d bytes", n)
		}
	})
}
