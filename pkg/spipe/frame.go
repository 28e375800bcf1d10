package spipe

import (
	"fmt"
	"math"

	"github.com/spipe-dev/spipe/internal/alias"
	"github.com/spipe-dev/spipe/pkg/aead"
)

// FrameType is the kind of a frame, the first byte of its header.
type FrameType uint8

// The frame types.
const (
	// FrameData carries stream bytes.
	FrameData FrameType = 1
	// FrameCloseWrite is the authenticated end of one direction: the
	// sender will send no more frames (half-close).
	FrameCloseWrite FrameType = 2
	// FrameKeepalive carries nothing; it proves the peer alive and is
	// skipped by the reader.
	FrameKeepalive FrameType = 3
)

// framePadded is the type-byte flag of a padded frame, whose payload is a
// 3-byte big-endian data length, the data, then zeros.
const framePadded = 0x80

// padPrefix is the size of a padded frame's data-length prefix.
const padPrefix = 3

// Frame geometry.
const (
	// FrameHeaderSize is the size of the cleartext (but authenticated)
	// frame header: type (1 byte) and payload length (3 bytes, big-endian).
	FrameHeaderSize = 4
	// FrameOverhead is what a frame adds to its payload: header and tag.
	FrameOverhead = FrameHeaderSize + aead.TagSize
)

// MaxFrameCounter is the last frame number a direction may use; a direction
// that has used it fails with ErrCounterExhausted rather than wrap.
const MaxFrameCounter = math.MaxUint64 - 1

// FrameCipher seals and opens the frames of one direction of a connection
// under that direction's key. Frame i is sealed with nonce i, so any frame
// can be opened on its own given its number (random access into a recorded
// stream). A FrameCipher holds scratch space and is not safe for concurrent
// use; make one per goroutine.
type FrameCipher struct {
	aead          frameAEAD
	nonceSize     int
	headerInNonce bool // the AEAD takes no additional data (secretbox)
	ctOff         int  // where plaintext sits inside the sealed payload
	nonce         [aead.NonceSizeX]byte
}

// NewFrameCipher returns the frame cipher of suite under a 32-byte direction
// key.
func NewFrameCipher(suite Suite, key []byte) (*FrameCipher, error) {
	if !suite.Valid() {
		return nil, fmt.Errorf("spipe: unknown suite %d", uint8(suite))
	}
	a, err := newFrameAEAD(suite.AEAD(), key)
	if err != nil {
		return nil, fmt.Errorf("spipe: frame cipher: %w", err)
	}
	f := &FrameCipher{aead: a, nonceSize: a.NonceSize(), headerInNonce: suites[suite].headerInNonce}
	if f.headerInNonce {
		f.ctOff = aead.TagSize // secretbox output is tag || ciphertext
	}
	return f, nil
}

// frameAEAD is what FrameCipher seals with: a cipher.AEAD, or a secretbox
// through boxAEAD.
type frameAEAD interface {
	NonceSize() int
	Seal(dst, nonce, plaintext, additionalData []byte) []byte
	Open(dst, nonce, ciphertext, additionalData []byte) ([]byte, error)
}

// newFrameAEAD returns the construction of an aead suite.
func newFrameAEAD(s aead.Suite, key []byte) (frameAEAD, error) {
	if !s.Secretbox() {
		return aead.New(s, key)
	}
	b, err := aead.NewSecretbox(s, key)
	if err != nil {
		return nil, err
	}
	return boxAEAD{b}, nil
}

// boxAEAD gives an aead.Secretbox the shape of frameAEAD. The frame
// header is bound through the nonce, so there is never additional data.
type boxAEAD struct{ b *aead.Secretbox }

func (boxAEAD) NonceSize() int { return aead.NonceSizeX }

func (x boxAEAD) Seal(dst, nonce, plaintext, _ []byte) []byte {
	return x.b.Seal(dst, (*[aead.NonceSizeX]byte)(nonce), plaintext)
}

func (x boxAEAD) Open(dst, nonce, box, _ []byte) ([]byte, error) {
	return x.b.Open(dst, (*[aead.NonceSizeX]byte)(nonce), box)
}

// setNonce writes frame counter's nonce: the counter as 8 little-endian
// bytes, then (for suites without additional data) the header, then zeros.
// It returns the additional data to authenticate: the header, or nothing.
func (f *FrameCipher) setNonce(counter uint64, header []byte) (nonce, ad []byte) {
	aead.PutCounterNonce(f.nonce[:f.nonceSize], counter)
	if f.headerInNonce {
		copy(f.nonce[8:8+FrameHeaderSize], header)
		return f.nonce[:f.nonceSize], nil
	}
	return f.nonce[:f.nonceSize], header
}

// PaddedSize returns the payload size of a frame carrying n data bytes
// padded to a multiple of padTo (n itself if padTo is 0).
func PaddedSize(n, padTo int) int {
	if padTo <= 0 {
		return n
	}
	return (n + padPrefix + padTo - 1) / padTo * padTo
}

// SealFrame appends frame number counter of type t carrying data to dst and
// returns the extended slice: header, then the sealed payload. With padTo >
// 0 the payload is padded to a multiple of padTo. If dst has capacity for
// the frame, SealFrame allocates nothing; data must not overlap that
// capacity. It panics if the payload would exceed MaxPayloadLimit or
// counter exceeds MaxFrameCounter: callers bound both.
func (f *FrameCipher) SealFrame(dst []byte, counter uint64, t FrameType, data []byte, padTo int) []byte {
	bodyLen := PaddedSize(len(data), padTo)
	if bodyLen > MaxPayloadLimit {
		panic("spipe: SealFrame payload larger than MaxPayloadLimit")
	}
	if counter > MaxFrameCounter {
		panic("spipe: SealFrame counter exhausted")
	}
	total := FrameHeaderSize + bodyLen + aead.TagSize
	ret, frame := sliceForAppend(dst, total)
	header := frame[:FrameHeaderSize]
	header[0] = byte(t)
	put24(header[1:], bodyLen)
	pt := frame[FrameHeaderSize+f.ctOff:][:bodyLen]
	switch {
	case padTo > 0:
		header[0] |= framePadded
		put24(pt, len(data))
		if !staged(pt[padPrefix:], data) {
			copy(pt[padPrefix:], data)
		}
		clear(pt[padPrefix+len(data):])
	case !alias.AnyOverlap(data, frame):
		// Seal straight from data: one pass over the bytes instead of a
		// copy and a pass.
		pt = data
	case !staged(pt, data):
		copy(pt, data)
	}
	nonce, ad := f.setNonce(counter, header)
	// When pt was staged, it sits exactly where the ciphertext lands
	// (in-place sealing as cipher.AEAD defines it).
	f.aead.Seal(frame[FrameHeaderSize:FrameHeaderSize], nonce, pt, ad)
	return ret
}

// staged reports whether data already sits where into starts, as when a
// reader filled the frame's plaintext area directly: then there is
// nothing to copy.
func staged(into, data []byte) bool {
	return len(data) > 0 && &into[0] == &data[0]
}

// FrameSize returns the total size (header, payload, tag) of the frame whose
// header starts header, or ErrFrameTooLarge if the header announces a
// payload above MaxPayloadLimit. The header is not yet authenticated.
func FrameSize(header []byte) (int, error) {
	if len(header) < FrameHeaderSize {
		return 0, fmt.Errorf("spipe: frame header: %w", ErrTruncated)
	}
	n := get24(header[1:])
	if n > MaxPayloadLimit {
		return 0, ErrFrameTooLarge
	}
	return FrameHeaderSize + n + aead.TagSize, nil
}

// OpenFrame authenticates frame (exactly one frame: header and sealed
// payload) as frame number counter and returns its type and data. It
// decrypts in place, so frame's contents are overwritten and data aliases
// frame. On failure it returns ErrTampered (not authentic), ErrTruncated
// (shorter than its header announces), ErrFrameTooLarge or
// ErrMalformedFrame (authentic but of unknown type or bad padding), and no
// data.
func (f *FrameCipher) OpenFrame(frame []byte, counter uint64) (FrameType, []byte, error) {
	size, err := FrameSize(frame)
	if err != nil {
		return 0, nil, err
	}
	if len(frame) < size {
		return 0, nil, ErrTruncated
	}
	if len(frame) > size || counter > MaxFrameCounter {
		return 0, nil, ErrTampered
	}
	return f.open(frame[FrameHeaderSize+f.ctOff:][:0], frame, counter)
}

// open authenticates frame (whose size the caller has checked) and decrypts
// its payload into dst, which is frame's own payload for in-place opening
// or a disjoint buffer with room for it. If the tag is not valid nothing
// is written to dst (pkg/aead checks the tag before it decrypts) and the
// caller returns none of it.
func (f *FrameCipher) open(dst, frame []byte, counter uint64) (FrameType, []byte, error) {
	header := frame[:FrameHeaderSize]
	nonce, ad := f.setNonce(counter, header)
	pt, err := f.aead.Open(dst, nonce, frame[FrameHeaderSize:], ad)
	if err != nil {
		return 0, nil, ErrTampered
	}
	t := FrameType(header[0] &^ framePadded)
	if t < FrameData || t > FrameKeepalive {
		return 0, nil, ErrMalformedFrame
	}
	if header[0]&framePadded != 0 {
		if len(pt) < padPrefix {
			return 0, nil, ErrMalformedFrame
		}
		n := get24(pt)
		if n > len(pt)-padPrefix {
			return 0, nil, ErrMalformedFrame
		}
		pt = pt[padPrefix:][:n]
	}
	return t, pt, nil
}

func put24(b []byte, v int) {
	_ = b[2] // bounds check elimination hint
	b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v)
}

func get24(b []byte) int {
	_ = b[2] // bounds check elimination hint
	return int(b[0])<<16 | int(b[1])<<8 | int(b[2])
}

// sliceForAppend extends in by n bytes, reusing its capacity when it can,
// and returns the whole slice and the n new bytes.
func sliceForAppend(in []byte, n int) (head, tail []byte) {
	if total := len(in) + n; cap(in) >= total {
		head = in[:total]
	} else {
		head = make([]byte, total)
		copy(head, in)
	}
	tail = head[len(in):]
	return
}
