package keystream

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// These tests drive Stream with a fake kernel whose key stream spells out
// the block number, so they can check the counter bookkeeping (position,
// buffering, overflow) without any cipher in the way.
// The real kernels are checked against external vectors in pkg/chacha20
// and pkg/salsa20.

// fakeBlock is the fake key stream block for block number n: byte j is
// byte j%8 of n (little-endian) plus 17 times j/8, so every byte position
// within a block differs too.
func fakeBlock(n uint64) [BlockSize]byte {
	var b [BlockSize]byte
	for j := range b {
		b[j] = byte(n>>(8*(j%8))) + byte(17*(j/8))
	}
	return b
}

// fakeStream is what a correct Stream produces: fake blocks from block
// first, skipping skip bytes, n bytes long.
func fakeStream(first uint64, skip, n int) []byte {
	var out []byte
	for b := first; len(out) < skip+n; b++ {
		blk := fakeBlock(b)
		out = append(out, blk[:]...)
	}
	return out[skip : skip+n]
}

// recorder is a fake kernel that keeps the rules of the real ones (the
// cores' XORKeyStream functions) and records each call: it advances the
// low counter word and, where the layout has one, carries into the high
// word.
type recorder struct {
	t      *testing.T
	layout Layout
	calls  []call
}

type call struct {
	lo     uint32
	blocks int
}

func (r *recorder) kernel(s *[16]uint32, rounds int, dst, src []byte) {
	require.Equal(r.t, 20, rounds)
	require.Zero(r.t, len(src)%BlockSize, "whole blocks only")
	require.GreaterOrEqual(r.t, len(dst), len(src))
	blocks := len(src) / BlockSize
	r.calls = append(r.calls, call{s[r.layout.Lo], blocks})
	for i := range blocks {
		n := uint64(s[r.layout.Lo])
		if r.layout.Hi >= 0 {
			n |= uint64(s[r.layout.Hi]) << 32
		}
		ks := fakeBlock(n)
		for j := range ks {
			dst[i*BlockSize+j] = src[i*BlockSize+j] ^ ks[j]
		}
		s[r.layout.Lo]++
		if s[r.layout.Lo] == 0 && r.layout.Hi >= 0 {
			s[r.layout.Hi]++
		}
	}
}

var (
	layout32 = Layout{Name: "test32", Lo: 12, Hi: -1}
	layout64 = Layout{Name: "test64", Lo: 8, Hi: 9}
)

func newStream(t *testing.T, layout Layout) (*Stream, *recorder) {
	rec := &recorder{t: t, layout: layout}
	var s Stream
	var state [16]uint32
	for i := range state {
		state[i] = 0xdead0000 + uint32(i) // counter words must be ignored
	}
	s.Init(&state, rec.kernel, layout, 20)
	return &s, rec
}

func read(s *Stream, n int) []byte {
	b := make([]byte, n)
	s.XORKeyStream(b, b)
	return b
}

// TestWholeBlocksInOneCall checks that one long XORKeyStream, across the
// wrap of the low counter word, reaches the kernel as one call of all its
// whole blocks (the cores split and bound their assembly calls
// themselves) and one block for the buffered tail, and that the stream
// goes on from the block after.
func TestWholeBlocksInOneCall(t *testing.T) {
	s, rec := newStream(t, layout64)
	start := uint64(1<<32 - 3)
	s.SetCounter(start)
	got := read(s, 300000)
	require.Equal(t, fakeStream(start, 0, 300000), got)
	require.Equal(t, []call{{1<<32 - 3, 300000 / BlockSize}, {uint32(start + 300000/BlockSize), 1}}, rec.calls)
	require.Equal(t, fakeStream(start, 300000, 100), read(s, 100))
}

// TestPartialBlocksBuffered checks that tails are buffered: reading 1, 62
// and 1 bytes costs one kernel block, then the next read starts a new one.
func TestPartialBlocksBuffered(t *testing.T) {
	for _, layout := range []Layout{layout32, layout64} {
		s, rec := newStream(t, layout)
		got := append(append(read(s, 1), read(s, 62)...), read(s, 1)...)
		require.Equal(t, fakeStream(0, 0, 64), got)
		require.Len(t, rec.calls, 1)
		got = read(s, 100)
		require.Equal(t, fakeStream(1, 0, 100), got)
	}
}

// TestOverflow32 checks the 32-bit counter's end: the last block is
// available, in pieces too, and anything past it panics before writing.
func TestOverflow32(t *testing.T) {
	s, rec := newStream(t, layout32)
	s.SetCounter(1<<32 - 2)
	buf := make([]byte, 129)
	require.PanicsWithValue(t, "test32: counter overflow", func() { s.XORKeyStream(buf, buf) })
	require.Equal(t, make([]byte, 129), buf)
	require.Empty(t, rec.calls, "refused before calling the kernel")

	require.Equal(t, fakeStream(1<<32-2, 0, 100), read(s, 100))
	require.Equal(t, fakeStream(1<<32-2, 100, 28), read(s, 28))
	require.PanicsWithValue(t, "test32: counter overflow", func() { read(s, 1) })

	s.SetCounter(1 << 32)
	require.PanicsWithValue(t, "test32: counter overflow", func() { read(s, 1) })
	require.PanicsWithValue(t, "test32: counter out of range", func() { s.SetCounter(1<<32 + 1) })
	require.PanicsWithValue(t, "test32: seek past the end of the key stream", func() { s.Seek(1<<38 + 1) })
	s.Seek(1 << 38) // exactly the end is a valid position
	require.PanicsWithValue(t, "test32: counter overflow", func() { read(s, 1) })
	s.Seek(1<<38 - 5)
	require.Equal(t, fakeStream(1<<32-1, 59, 5), read(s, 5))
}

// TestOverflow64 checks the 64-bit counter: it carries through every
// 2^32 boundary, and only the end of the 2^64-block space is refused.
func TestOverflow64(t *testing.T) {
	s, _ := newStream(t, layout64)
	s.SetCounter(1<<64 - 2)
	buf := make([]byte, 129)
	require.PanicsWithValue(t, "test64: counter overflow", func() { s.XORKeyStream(buf, buf) })
	require.Equal(t, make([]byte, 129), buf)
	require.Equal(t, fakeStream(1<<64-2, 0, 128), read(s, 128))
	require.PanicsWithValue(t, "test64: counter overflow", func() { read(s, 1) })
	s.XORKeyStream(nil, nil) // empty calls are always fine

	s.Seek(1<<64 - 1) // the last byte of block 2^58-1
	require.Equal(t, fakeStream(1<<58-1, 63, 3), read(s, 3))
}

// TestSeek checks Seek against reading from the start, mid-block and at
// block boundaries, after a buffered partial block.
func TestSeek(t *testing.T) {
	for _, layout := range []Layout{layout32, layout64} {
		s, _ := newStream(t, layout)
		for _, off := range []uint64{0, 1, 63, 64, 65, 1000, 1 << 20, 1<<32*64 - 1, 1<<32*64 - 64} {
			s.SetCounter(0)
			read(s, 5) // Seek must drop this buffered block
			s.Seek(off)
			n := 64
			if layout.Hi < 0 {
				n = int(min(64, 1<<38-off)) // the 32-bit stream ends at 2^38
			}
			want := fakeStream(off/64, int(off%64), n)
			require.Equal(t, want, read(s, n), "offset %d", off)
		}
	}
}

// TestMisuse checks the panics for short dst and inexact overlap, with the
// layout's name as prefix, and that exact overlap and empty input are
// fine.
func TestMisuse(t *testing.T) {
	s, rec := newStream(t, layout32)
	buf := make([]byte, 200)
	require.PanicsWithValue(t, "test32: output smaller than input", func() { s.XORKeyStream(buf[:9], buf[100:110]) })
	require.PanicsWithValue(t, "test32: invalid buffer overlap", func() { s.XORKeyStream(buf[1:11], buf[:10]) })
	require.Empty(t, rec.calls)
	s.XORKeyStream(nil, nil)
	s.XORKeyStream(buf[:10], buf[:10])
	require.Equal(t, fakeStream(0, 0, 10), buf[:10])
}

// TestInitIgnoresCounterWords checks that Init starts at block 0 whatever
// the counter words of the given state hold, and keeps the other words.
func TestInitIgnoresCounterWords(t *testing.T) {
	var got [16]uint32
	kernel := func(s *[16]uint32, _ int, dst, src []byte) {
		got = *s
		for i := 0; i < len(src); i += BlockSize {
			binary.LittleEndian.PutUint32(dst[i:], 1)
		}
	}
	var state [16]uint32
	for i := range state {
		state[i] = uint32(100 + i)
	}
	var s Stream
	s.Init(&state, kernel, layout64, 20)
	read(&s, 64)
	want := state
	want[8], want[9] = 0, 0
	require.Equal(t, want, got)
}
