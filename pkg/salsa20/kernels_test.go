package salsa20_test

import (
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

// simdKernels lists the kernels under test: every supported one but the
// generic reference.
func simdKernels(t *testing.T) []string {
	names := salsacore.Kernels()
	require.Equal(t, "generic", names[len(names)-1])
	return names[:len(names)-1]
}

// withKernel runs f with the key stream core switched to name.
func withKernel(t *testing.T, name string, f func()) {
	t.Helper()
	restore, err := salsacore.UseKernel(name)
	require.NoError(t, err)
	defer restore()
	f()
}

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
	ks := make([]byte, n)
	withKernel(t, "generic", func() {
		c, err := salsa20.NewUnauthenticatedCipherWithRounds(key, nonce, rounds)
		require.NoError(t, err)
		c.SetCounter(start)
		c.XORKeyStream(ks, ks)
	})
	return ks
}

func xorBytes(a, b []byte) []byte {
	out := make([]byte, len(a))
	for i := range a {
		out[i] = a[i] ^ b[i]
	}
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
			for _, name := range simdKernels(t) {
				t.Run(fmt.Sprintf("%s/%s/%d", name, v.name, rounds), func(t *testing.T) {
					withKernel(t, name, func() {
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
			for _, name := range simdKernels(t) {
				withKernel(t, name, func() {
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
						require.Equal(t, want, data, "%s %s/%d, chunks %v", name, v.name, rounds, cuts)
					}
				})
			}
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
				for _, name := range simdKernels(t) {
					withKernel(t, name, func() {
						c, err := salsa20.NewUnauthenticatedCipherWithRounds(key, nonce, rounds)
						require.NoError(t, err)
						c.SetCounter(start)
						dst := make([]byte, n)
						c.XORKeyStream(dst, msg)
						assert.Equal(t, xorBytes(msg, ks), dst, "%s rounds %d from block %#x", name, rounds, start)
						if start > 1<<33 {
							assert.Panics(t, func() { c.XORKeyStream(dst[:1], msg[:1]) }, "%s: past block 2^64-1", name)
						}
					})
				}
			}
		}
	}
}

// TestKernelsAllocateNothing: the kernels run on caller memory only.
func TestKernelsAllocateNothing(t *testing.T) {
	key := make([]byte, 32)
	nonce := make([]byte, 8)
	buf := make([]byte, 5000)
	for _, name := range simdKernels(t) {
		withKernel(t, name, func() {
			c, err := salsa20.NewUnauthenticatedCipher(key, nonce)
			require.NoError(t, err)
			for _, n := range []int{1, 64, 100, 1024, 5000} {
				allocs := testing.AllocsPerRun(20, func() { c.XORKeyStream(buf[:n], buf[:n]) })
				assert.Zero(t, allocs, "%s, %d bytes", name, n)
			}
		})
	}
}
