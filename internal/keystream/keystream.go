// Package keystream turns a core's key stream function (chachacore or
// salsacore) into a seekable crypto/cipher.Stream: it buffers partial
// blocks, owns the block counter's position and its overflow policy, and
// rejects misuse before any work. The cores carry the counter and bound
// their assembly calls themselves.
//
// Both pkg/chacha20 and pkg/salsa20 are thin wrappers around [Stream], so the
// two families cannot drift apart in these rules.
package keystream

import (
	"crypto/subtle"

	"github.com/spipe-dev/spipe/internal/alias"
)

// BlockSize is the size in bytes of one keystream block of either family.
const BlockSize = 64

// Kernel XORs len(src) bytes of key stream into dst (Stream passes whole
// blocks) starting at the block counter in s, and advances the counter by
// the blocks it used, carrying from the low word into the high one where
// the Layout has one: a core's XORKeyStream (chachacore.XORKeyStream64 for
// the 64-bit ChaCha counter). It accepts any length and keeps its own
// assembly calls short.
type Kernel func(s *[16]uint32, rounds int, dst, src []byte)

// Layout says where a family keeps its block counter in the state.
type Layout struct {
	Name string // package name used as the prefix of panic messages
	Lo   int    // index of the low counter word
	Hi   int    // index of the high counter word, or -1 for a 32-bit counter
}

// Stream is a keystream position over one key and nonce. The zero value is
// not usable; call Init.
type Stream struct {
	state  [16]uint32
	kernel Kernel
	layout Layout
	rounds int

	next      uint64 // block index the kernel produces next
	exhausted bool   // every block of the counter space has been produced
	buf       [BlockSize]byte
	off       int // bytes of buf already used; BlockSize when buf is empty
}

// zeroBlock is the input for a keystream block that is buffered rather than
// XORed straight into the caller's data.
var zeroBlock [BlockSize]byte

// Init sets up s over state (key, nonce and constants filled in, counter
// words ignored) at block 0.
func (s *Stream) Init(state *[16]uint32, kernel Kernel, layout Layout, rounds int) {
	*s = Stream{state: *state, kernel: kernel, layout: layout, rounds: rounds, off: BlockSize}
	s.setBlock(0)
}

// blocksLeft returns how many blocks remain before the counter space ends;
// all is true when the whole 2^64 space remains (which a uint64 cannot count).
func (s *Stream) blocksLeft() (n uint64, all bool) {
	if s.exhausted {
		return 0, false
	}
	if s.layout.Hi < 0 {
		return 1<<32 - s.next, false
	}
	if s.next == 0 {
		return 0, true
	}
	return -s.next, false
}

// setBlock positions the kernel at block n and discards the buffer.
func (s *Stream) setBlock(n uint64) {
	s.next = n
	s.exhausted = false
	s.off = BlockSize
	s.state[s.layout.Lo] = uint32(n)
	if s.layout.Hi >= 0 {
		s.state[s.layout.Hi] = uint32(n >> 32)
	}
}

// advance records that the kernel produced n blocks (and moved the counter
// in the state on by as many).
func (s *Stream) advance(n uint64) {
	s.next += n
	if s.layout.Hi < 0 {
		s.exhausted = s.next == 1<<32
		return
	}
	if s.next == 0 && n > 0 {
		s.exhausted = true
	}
}

// XORKeyStream implements crypto/cipher.Stream.
func (s *Stream) XORKeyStream(dst, src []byte) {
	if len(src) == 0 {
		return
	}
	if len(dst) < len(src) {
		panic(s.layout.Name + ": output smaller than input")
	}
	dst = dst[:len(src)]
	if alias.InexactOverlap(dst, src) {
		panic(s.layout.Name + ": invalid buffer overlap")
	}
	// Refuse before any work, so an overflowing call leaves dst untouched
	// rather than half encrypted.
	if left, all := s.blocksLeft(); !all {
		buffered := uint64(BlockSize - s.off)
		if uint64(len(src)) > buffered && (uint64(len(src))-buffered+BlockSize-1)/BlockSize > left {
			panic(s.layout.Name + ": counter overflow")
		}
	}

	if s.off < BlockSize {
		n := xorBytes(dst, src, s.buf[s.off:])
		s.off += n
		dst, src = dst[n:], src[n:]
	}

	if n := len(src) &^ (BlockSize - 1); n > 0 {
		s.kernel(&s.state, s.rounds, dst[:n], src[:n])
		s.advance(uint64(n / BlockSize))
		dst, src = dst[n:], src[n:]
	}

	if len(src) > 0 {
		s.kernel(&s.state, s.rounds, s.buf[:], zeroBlock[:BlockSize])
		s.advance(1)
		s.off = xorBytes(dst, src, s.buf[:])
	}
}

// SetCounter positions the stream at the start of block n. For a 32-bit
// counter n may be at most 2^32 (the end of the stream); larger values panic.
func (s *Stream) SetCounter(n uint64) {
	if s.layout.Hi < 0 && n > 1<<32 {
		panic(s.layout.Name + ": counter out of range")
	}
	s.setBlock(n)
	if s.layout.Hi < 0 && n == 1<<32 {
		s.exhausted = true
	}
}

// Seek positions the stream at byte offset from the start of block 0.
func (s *Stream) Seek(offset uint64) {
	block, within := offset/BlockSize, int(offset%BlockSize)
	if s.layout.Hi < 0 && (block > 1<<32 || block == 1<<32 && within > 0) {
		panic(s.layout.Name + ": seek past the end of the key stream")
	}
	s.SetCounter(block)
	if within > 0 {
		s.kernel(&s.state, s.rounds, s.buf[:], zeroBlock[:BlockSize])
		s.advance(1)
		s.off = within
	}
}

// xorBytes sets dst[i] = src[i] ^ ks[i] for the shortest of the three and
// returns how many bytes it wrote.
func xorBytes(dst, src, ks []byte) int {
	n := min(len(dst), len(src), len(ks))
	return subtle.XORBytes(dst[:n], src[:n], ks[:n])
}
