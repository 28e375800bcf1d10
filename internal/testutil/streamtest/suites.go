package streamtest

import (
	"bytes"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ChunkingInvariance checks, on every kernel and variant, that any split
// of a 5000-byte message into XORKeyStream calls, including empty calls,
// gives the bytes of one call: 20 random splits, then byte at a time for
// 300 bytes with an empty call between bytes.
func ChunkingInvariance(t *testing.T, fam Family) {
	r := testutil.Rand(t)
	fam.forEachKernelAndVariant(t, r, func(t *testing.T, v Variant, key, nonce []byte) {
		src := testutil.Bytes(r, 5000)
		want := fam.oneCall(t, v, key, nonce, src)
		for range 20 {
			got := make([]byte, len(src))
			XORInChunks(r, fam.must(t, key, nonce, v.Rounds), got, src)
			require.Equal(t, want, got, v.Name)
		}
		c := fam.must(t, key, nonce, v.Rounds)
		got := make([]byte, 300)
		for i := range got {
			c.XORKeyStream(got[i:i+1], src[i:i+1])
			c.XORKeyStream(nil, nil)
		}
		require.Equal(t, want[:300], got, "%s: byte at a time", v.Name)
	})
}

// InPlace checks, on every kernel and variant, that dst == src encrypts
// in place across partial blocks, and that decrypting in place restores
// the message.
func InPlace(t *testing.T, fam Family) {
	r := testutil.Rand(t)
	fam.forEachKernelAndVariant(t, r, func(t *testing.T, v Variant, key, nonce []byte) {
		msg := testutil.Bytes(r, 1000)
		want := fam.oneCall(t, v, key, nonce, msg)

		buf := bytes.Clone(msg)
		XORInChunks(r, fam.must(t, key, nonce, v.Rounds), buf, buf)
		require.Equal(t, want, buf, v.Name)
		fam.must(t, key, nonce, v.Rounds).XORKeyStream(buf, buf)
		require.Equal(t, msg, buf, "%s: decrypt", v.Name)
	})
}

// MisusePanics checks, on the first variant, that inexact overlap and a
// short dst panic with the family's message before anything is written or
// the stream moves (one subtest per misuse), and that a longer dst is fine:
// only len(src) bytes are written.
func MisusePanics(t *testing.T, fam Family) {
	v := fam.Variants[0]
	key, nonce := make([]byte, v.KeySize), make([]byte, v.NonceSize)
	overlap, short := fam.Name+": invalid buffer overlap", fam.Name+": output smaller than input"
	for _, tc := range []struct {
		name     string
		dst, src func(buf []byte) []byte
		msg      string
	}{
		{"dst one byte ahead", func(b []byte) []byte { return b[1:101] }, func(b []byte) []byte { return b[:100] }, overlap},
		{"dst one byte behind", func(b []byte) []byte { return b[:100] }, func(b []byte) []byte { return b[1:101] }, overlap},
		{"dst ends inside src", func(b []byte) []byte { return b[0:70] }, func(b []byte) []byte { return b[64:134] }, overlap},
		{"short dst", func(b []byte) []byte { return b[200:299] }, func(b []byte) []byte { return b[:100] }, short},
		{"nil dst", func([]byte) []byte { return nil }, func(b []byte) []byte { return b[:1] }, short},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fam.must(t, key, nonce, v.Rounds)
			buf := make([]byte, 300)
			require.PanicsWithValue(t, tc.msg, func() { c.XORKeyStream(tc.dst(buf), tc.src(buf)) })
			assert.Equal(t, make([]byte, 300), buf, "nothing written")
			assert.Equal(t, Keystream(fam.must(t, key, nonce, v.Rounds), 64), Keystream(c, 64), "stream did not move")
		})
	}
	c := fam.must(t, key, nonce, v.Rounds)
	dst := make([]byte, 10)
	c.XORKeyStream(dst, make([]byte, 5))
	assert.Equal(t, make([]byte, 5), dst[5:], "only len(src) bytes written")
	assert.Equal(t, Keystream(fam.must(t, key, nonce, v.Rounds), 5), dst[:5])
}

// SeekEqualsDiscarding checks, on every kernel and variant, that Seek(n)
// gives the key stream a fresh cipher gives after discarding n bytes, for
// offsets around block boundaries and the 64 KiB kernel-call bound and 10
// random ones below 69000, with bytes buffered before the Seek; and that
// huge offsets (the last blocks Seek reaches, blocks around 2^32, a random
// one) land on the block SetCounter gives.
func SeekEqualsDiscarding(t *testing.T, fam Family) {
	r := testutil.Rand(t)
	fam.forEachKernelAndVariant(t, r, func(t *testing.T, v Variant, key, nonce []byte) {
		long := Keystream(fam.must(t, key, nonce, v.Rounds), 70000)
		offsets := []int{0, 1, 63, 64, 65, 127, 128, 1000, 4095, 65535, 65536, 65537, 69000}
		for range 10 {
			offsets = append(offsets, r.IntN(69000))
		}
		for _, off := range offsets {
			c := fam.must(t, key, nonce, v.Rounds)
			Keystream(c, 3) // Seek must discard the buffered block
			c.Seek(uint64(off))
			require.Equal(t, long[off:off+1000], Keystream(c, 1000), "%s: offset %d", v.Name, off)
		}

		// Huge offsets: the block SetCounter reaches, then the bytes
		// within it. A 32-bit counter ends at block 2^32; a 64-bit
		// one outlasts Seek's 64-bit byte offset, which ends in block
		// 2^58-1.
		maxBlock := uint64(1<<32 - 1)
		blocks := []uint64{1<<32 - 1}
		if v.CounterBits == 64 {
			maxBlock = 1<<58 - 1
			blocks = append(blocks, 1<<32)
		}
		blocks = append(blocks, maxBlock, maxBlock-1, r.Uint64N(maxBlock))
		for _, block := range blocks {
			within := uint64(r.IntN(64))
			ref := fam.must(t, key, nonce, v.Rounds)
			ref.SetCounter(block)
			want := Keystream(ref, 64)

			c := fam.must(t, key, nonce, v.Rounds)
			c.Seek(block*64 + within)
			require.Equal(t, want[within:], Keystream(c, 64-int(within)), "%s: block %#x + %d", v.Name, block, within)
		}
	})
}

// SetCounter checks, on every kernel, that SetCounter on the first variant
// gives reference's key stream (200 bytes from block counter, computed
// outside this module) for each of counters in turn, on one cipher: so it
// moves backwards as well as forwards and discards buffered key stream.
func SetCounter(t *testing.T, fam Family, counters []uint64, reference func(t *testing.T, key, nonce []byte, counter uint64, n int) []byte) {
	r := testutil.Rand(t)
	v := fam.Variants[0]
	fam.ForEachKernel(t, func(t *testing.T) {
		key, nonce := testutil.Bytes(r, v.KeySize), testutil.Bytes(r, v.NonceSize)
		c := fam.must(t, key, nonce, v.Rounds)
		for _, n := range counters {
			Keystream(c, r.IntN(200)) // leave something buffered
			c.SetCounter(n)
			require.Equal(t, reference(t, key, nonce, n, 200), Keystream(c, 200), "counter %d", n)
		}
	})
}

// ZeroAllocs checks that XORKeyStream, on every variant, allocates nothing
// for partial blocks, whole blocks and long messages, and Seek neither.
func ZeroAllocs(t *testing.T, fam Family) {
	for _, v := range fam.Variants {
		c := fam.must(t, make([]byte, v.KeySize), make([]byte, v.NonceSize), v.Rounds)
		for _, n := range []int{1, 63, 64, 100, 4096, 100000} {
			buf := make([]byte, n)
			allocs := testing.AllocsPerRun(20, func() { c.XORKeyStream(buf, buf) })
			assert.Zero(t, allocs, "%s, %d bytes", v.Name, n)
		}
		allocs := testing.AllocsPerRun(20, func() { c.Seek(12345) })
		assert.Zero(t, allocs, "%s: Seek", v.Name)
	}
}

// KernelName checks that the package's Kernel names the best kernel this
// CPU runs: the first of its core's list, which ends with "generic".
func KernelName(t *testing.T, fam Family) {
	kernels := fam.Kernels.Kernels()
	require.NotEmpty(t, kernels)
	assert.Equal(t, kernels[0], fam.Kernels.Active())
	assert.Equal(t, "generic", kernels[len(kernels)-1])
}

// oneCall returns src XORed, in one call, with the key stream of a fresh
// cipher of variant v.
func (fam Family) oneCall(t *testing.T, v Variant, key, nonce, src []byte) []byte {
	t.Helper()
	out := make([]byte, len(src))
	fam.must(t, key, nonce, v.Rounds).XORKeyStream(out, src)
	return out
}
