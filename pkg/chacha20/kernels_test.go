package chacha20_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/pkg/chacha20"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests drive every kernel of internal/chachacore through this
// package, the way users reach it, and hold it to the independent
// reference refStream: byte lengths, start offsets and chunkings pass
// through the key stream's buffering into the core's whole blocks, its
// partial-block joins and its bounded kernel calls.

// nonceSizes are the two counter layouts: RFC 8439's 32-bit counter and
// the original 64-bit one.
var nonceSizes = []int{chacha20.NonceSize, chacha20.NonceSizeDJB}

// TestKernelsEveryLengthAndOffset encrypts every length 0..2048 at a start
// offset that cycles through all 64 positions within a block, and every
// offset with lengths around the kernel widths, on every kernel, round
// count and counter layout. Output buffers sit at odd addresses; bytes
// past the output must stay untouched.
func TestKernelsEveryLengthAndOffset(t *testing.T) {
	r := testutil.Rand(t)
	const maxLen = 2048
	src := testutil.Bytes(r, maxLen+3*chacha20.BlockSize)
	backing := make([]byte, maxLen+3*chacha20.BlockSize+16)
	untouched := bytes.Repeat([]byte{0xa5}, len(backing))
	family.ForEachKernel(t, func(t *testing.T) {
		for _, nonceSize := range nonceSizes {
			for _, rounds := range []int{8, 12, 20} {
				key, nonce := testutil.Bytes(r, chacha20.KeySize), testutil.Bytes(r, nonceSize)
				want := refStream(key, nonce, 0, 0, rounds, len(src))
				for i := range want {
					want[i] ^= src[i]
				}
				// check compares whole buffers (the race detector makes a
				// loop over bytes slow) and looks closer on failure.
				check := func(offset, n int) {
					c := mustCipher(t, key, nonce, rounds)
					c.Seek(uint64(offset))
					copy(backing, untouched)
					shift := 1 + (offset+n)%7
					dst := backing[shift : shift+n]
					c.XORKeyStream(dst, src[offset:offset+n])
					if !bytes.Equal(dst, want[offset:offset+n]) {
						require.Equal(t, want[offset:offset+n], dst, "nonce %d, rounds %d, offset %d, length %d", nonceSize, rounds, offset, n)
					}
					if !bytes.Equal(backing[:shift], untouched[:shift]) || !bytes.Equal(backing[shift+n:], untouched[shift+n:]) {
						require.Failf(t, "write outside the output", "output at %d..%d of the buffer; nonce %d, rounds %d, offset %d", shift, shift+n, nonceSize, rounds, offset)
					}
				}
				for n := 0; n <= maxLen; n++ {
					check((n*7)%chacha20.BlockSize, n)
				}
				for offset := range chacha20.BlockSize {
					for _, n := range []int{1, 63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 2047, 2048} {
						check(offset, n)
					}
				}
			}
		}
	})
}

// TestKernelsRandomChunkings feeds a long stream in random pieces, in place
// and not, and compares it with the reference. Chunks cross the 64 KiB
// bound the core puts on one kernel call.
func TestKernelsRandomChunkings(t *testing.T) {
	r := testutil.Rand(t)
	total := 200 << 10
	if testing.Short() {
		total = 40 << 10
	}
	family.ForEachKernel(t, func(t *testing.T) {
		for _, nonceSize := range nonceSizes {
			for _, rounds := range []int{8, 12, 20} {
				key, nonce := testutil.Bytes(r, chacha20.KeySize), testutil.Bytes(r, nonceSize)
				src := testutil.Bytes(r, total)
				want := refStream(key, nonce, 0, 0, rounds, total)
				for i := range want {
					want[i] ^= src[i]
				}

				got := make([]byte, total)
				inPlace := append([]byte(nil), src...)
				c, cInPlace := mustCipher(t, key, nonce, rounds), mustCipher(t, key, nonce, rounds)
				var cuts []int
				for done := 0; done < total; {
					var n int
					switch r.IntN(4) {
					case 0:
						n = r.IntN(chacha20.BlockSize)
					case 1:
						n = r.IntN(16 * chacha20.BlockSize)
					case 2:
						n = chacha20.BlockSize * r.IntN(40)
					default:
						n = r.IntN(100 << 10)
					}
					n = min(n, total-done)
					c.XORKeyStream(got[done:done+n], src[done:done+n])
					cInPlace.XORKeyStream(inPlace[done:done+n], inPlace[done:done+n])
					cuts = append(cuts, n)
					done += n
				}
				msg := fmt.Sprintf("nonce %d, rounds %d, chunks %v", nonceSize, rounds, cuts)
				assert.Equal(t, want, got, msg)
				assert.Equal(t, want, inPlace, "in place: "+msg)
			}
		}
	})
}
