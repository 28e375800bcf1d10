package poly1305

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/stretchr/testify/assert"
)

// aeadMACInput builds RFC 8439's MAC input (section 2.8) the long way, for
// x/crypto's Poly1305 to tag.
func aeadMACInput(ad, ct []byte) []byte {
	pad := func(b []byte) []byte {
		for len(b)%16 != 0 {
			b = append(b, 0)
		}
		return b
	}
	in := pad(append([]byte{}, ad...))
	in = pad(append(in, ct...))
	in = binary.LittleEndian.AppendUint64(in, uint64(len(ad)))
	return binary.LittleEndian.AppendUint64(in, uint64(len(ct)))
}

// TestSumAEAD compares SumAEAD with x/crypto over the MAC input built by
// hand, for additional data around the block size and every ciphertext
// length up to 2 KiB (the IFMA kernel's tail after any number of groups),
// on every kernel.
func TestSumAEAD(t *testing.T) {
	r := testutil.Rand(t)
	const maxLen = 2100
	ct := testutil.Bytes(r, maxLen)
	ad := testutil.Bytes(r, 40)
	forEachKernel(t, func(t *testing.T) {
		for _, adLen := range []int{0, 1, 12, 16, 17, 40} {
			for n := 0; n <= maxLen; n++ {
				key := randomKey(r)
				want := xcryptoSum(key, aeadMACInput(ad[:adLen], ct[:n]))
				var got [TagSize]byte
				SumAEAD(&got, key, ad[:adLen], ct[:n])
				if !assert.Equal(t, want, got, "ad %d bytes, ct %d bytes", adLen, n) {
					return
				}
			}
		}
	})
}

// TestMACSumAEAD writes the padded additional data and a random whole-block
// prefix of the ciphertext to a MAC, as pkg/aead does with long messages,
// and finishes with MAC.SumAEAD; and checks that it refuses a MAC off a
// block boundary or already summed.
func TestMACSumAEAD(t *testing.T) {
	r := testutil.Rand(t)
	ct := testutil.Bytes(r, 9000)
	ad := testutil.Bytes(r, 21)
	forEachKernel(t, func(t *testing.T) {
		for range 200 {
			n := r.IntN(len(ct) + 1)
			adLen := r.IntN(len(ad) + 1)
			split := 16 * r.IntN(n/16+1)
			key := randomKey(r)
			m := New(key)
			m.Write(ad[:adLen])
			m.Write(make([]byte, (16-adLen%16)%16))
			m.Write(ct[:split])
			var got [TagSize]byte
			m.SumAEAD(&got, ct[split:n], adLen, n)
			want := xcryptoSum(key, aeadMACInput(ad[:adLen], ct[:n]))
			if !assert.Equal(t, want, got, "ad %d, ct %d split at %d", adLen, n, split) {
				return
			}
			assert.Panics(t, func() { m.Write(ct[:1]) })
		}
	})
	var tag [TagSize]byte
	m := New(randomKey(r))
	m.Write(ct[:5])
	assert.Panics(t, func() { m.SumAEAD(&tag, nil, 0, 5) }, "off a block boundary")
	m = New(randomKey(r))
	m.Sum(nil)
	assert.Panics(t, func() { m.SumAEAD(&tag, nil, 0, 0) }, "after Sum")
}

// TestKernelsWithTail runs updateBlocksTail (message blocks, then up to
// three tail blocks in the same kernel call) from the extreme accumulators
// of extremeState on every kernel and compares with the
// reference absorbing the same blocks.
func TestKernelsWithTail(t *testing.T) {
	r := testutil.Rand(t)
	msg := testutil.Bytes(r, 4096)
	tail := testutil.Bytes(r, 48)
	for i := range 96 {
		st := extremeState(r, i)
		n := 16 * r.IntN(len(msg)/16+1)
		tn := 16 * (i % 4)
		want := st
		blocksGeneric(&want, msg[:n])
		blocksGeneric(&want, tail[:tn])
		checkEveryKernel(t, st, want, func(got *state) { updateBlocksTail(got, msg[:n], tail[:tn]) },
			fmt.Sprintf("%d + %d bytes", n, tn))
	}
}
