package frame

import (
	"fmt"
	"math"

	"github.com/spipe-dev/spipe/pkg/aead"
)

// Frame geometry.
const (
	// HeaderSize is the size of the cleartext (but authenticated) header:
	// the inner plaintext length n, 3 bytes big-endian.
	HeaderSize = 3
	// TagSize is the size of the authentication tag in every sealed
	// payload.
	TagSize = aead.TagSize
	// Overhead is what a frame adds to its inner plaintext: header and tag.
	// A frame of inner plaintext n is HeaderSize + n + TagSize bytes.
	Overhead = HeaderSize + TagSize
	// MaxPayload is the largest inner plaintext n a frame can carry (1 MiB;
	// the protocol lets each side announce a smaller limit).
	MaxPayload = 1 << 20
)

// MaxCounter is the last frame number a direction may use: sealing or
// opening beyond it would repeat a nonce.
const MaxCounter = math.MaxUint64 - 1

// PayloadSize returns the inner plaintext size n of a frame whose body
// (data and fields) is bodyLen bytes: the body and the type byte, rounded
// up to a multiple of padTo when padTo > 0.
func PayloadSize(bodyLen, padTo int) int {
	n := bodyLen + 1
	if padTo > 0 {
		n = (n + padTo - 1) / padTo * padTo
	}
	return n
}

// Size returns the total size of the frame that starts with header (its
// first HeaderSize bytes): HeaderSize + n + TagSize. It fails with
// ErrTruncated for fewer than HeaderSize bytes and with ErrTooLarge when
// the header announces n above MaxPayload. The header is not yet
// authenticated: use the size only to find the frame's end.
func Size(header []byte) (int, error) {
	if len(header) < HeaderSize {
		return 0, ErrTruncated
	}
	n := get24(header)
	if n > MaxPayload {
		return 0, fmt.Errorf("%w: header announces %d bytes", ErrTooLarge, n)
	}
	return HeaderSize + n + TagSize, nil
}

func put24(b []byte, v int) {
	_ = b[2] // bounds check elimination hint
	b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v)
}

func get24(b []byte) int {
	_ = b[2] // bounds check elimination hint
	return int(b[0])<<16 | int(b[1])<<8 | int(b[2])
}
