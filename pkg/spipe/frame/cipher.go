package frame

import (
	"fmt"

	"github.com/spipe-dev/spipe/internal/alias"
	"github.com/spipe-dev/spipe/pkg/aead"
)

// Cipher seals and opens the frames of one direction under that
// direction's 32-byte key. Frame number i uses nonce i, so any frame can be
// opened on its own given its number. A Cipher keeps nonce scratch space
// and is not safe for concurrent use: make one per goroutine (they are
// cheap) for parallel access.
type Cipher struct {
	c     construction
	nonce [aead.NonceSizeX]byte
}

// NewCipher returns the frame cipher of suite under a 32-byte direction
// key. Every suite of pkg/aead is a frame suite.
func NewCipher(suite aead.Suite, key []byte) (*Cipher, error) {
	c, err := newConstruction(suite, key)
	if err != nil {
		return nil, err
	}
	return &Cipher{c: c}, nil
}

// DataOffset is where a frame's data (its body) starts, counted from the
// first byte of the frame: after the header, and for the secretbox suites
// after the tag. A sender that reads data straight into
// dst[len(dst)+DataOffset():], puts its type's fields right behind it and
// passes that body to Seal seals it in place, without a copy.
func (f *Cipher) DataOffset() int { return HeaderSize + f.c.ctOff }

// setNonce writes the nonce of frame counter: the counter as 8
// little-endian bytes, then (for the secretbox suites) the header, then
// zeros. It returns the nonce and the additional data to authenticate:
// the header, or nothing.
func (f *Cipher) setNonce(counter uint64, header []byte) (nonce, ad []byte) {
	nonce = f.nonce[:f.c.nonceSize]
	aead.PutCounterNonce(nonce, counter)
	if f.c.headerInNonce() {
		copy(nonce[8:8+HeaderSize], header)
		return nonce, nil
	}
	return nonce, header
}

// Seal appends frame number counter, of type t and carrying body, to dst
// and returns the extended slice. The body is the frame's data, if its
// type carries any, followed by the type's FieldSize bytes of fields
// (for the mode-1 types, just the data). With padTo > 0 the inner
// plaintext is padded with zeros to a multiple of padTo bytes (see
// PayloadSize). If dst has room for the frame, Seal allocates nothing.
// body may sit exactly where the frame's body goes
// (dst[len(dst)+DataOffset():]), in which case it is sealed in place; any
// other overlap with dst's new bytes panics.
//
// Seal panics if t is not a frame type, if body does not fit t (shorter
// than its fields, or longer in a type without data), if the inner
// plaintext would exceed MaxPayload or if counter exceeds MaxCounter:
// callers bound all four.
func (f *Cipher) Seal(dst []byte, counter uint64, t Type, body []byte, padTo int) []byte {
	switch {
	case !t.valid():
		panic("frame: Seal of unknown type " + t.String())
	case !t.bodyFits(len(body)):
		panic(fmt.Sprintf("frame: %s frame with a body of %d bytes", t, len(body)))
	case counter > MaxCounter:
		panic("frame: Seal counter exhausted")
	}
	n := PayloadSize(len(body), padTo)
	if n > MaxPayload {
		panic(fmt.Sprintf("frame: Seal of %d bytes of inner plaintext, above MaxPayload", n))
	}
	ret, frame := sliceForAppend(dst, HeaderSize+n+TagSize)
	header := frame[:HeaderSize]
	put24(header, n)
	payload := frame[HeaderSize:]
	pt := payload[f.c.ctOff:][:n]
	if !staged(pt, body) {
		if alias.AnyOverlap(pt, body) {
			panic("frame: invalid buffer overlap")
		}
		copy(pt, body)
	}
	pt[len(body)] = byte(t)
	clear(pt[len(body)+1:])
	nonce, ad := f.setNonce(counter, header)
	f.c.seal(payload, nonce, pt, ad)
	return ret
}

// staged reports whether data already sits where into starts.
func staged(into, data []byte) bool {
	return len(data) > 0 && &into[0] == &data[0]
}

// Open authenticates frame (exactly one frame: header and sealed payload)
// as frame number counter and, if it is authentic, appends its body (its
// data, then its type's FieldSize bytes of fields) to dst, returning the
// frame's type and the extended slice. The type byte
// and padding are written after the data, into dst's spare capacity: give
// dst room for the whole inner plaintext (Size minus Overhead) and Open
// allocates nothing. To open in place, pass
// frame[f.DataOffset():f.DataOffset()] as dst; any other overlap of dst's
// spare capacity with frame panics.
//
// The tag is verified before anything is written to dst. On failure Open
// returns ErrTampered (not authentic as frame counter under this key),
// ErrTruncated (shorter than its header announces), ErrTooLarge (the
// header announces more than MaxPayload) or ErrMalformed (authentic, but
// no type, an unknown type, or a body that does not fit its type), and no
// data. Which types a connection's mode allows is for its caller to check.
func (f *Cipher) Open(dst, frame []byte, counter uint64) (Type, []byte, error) {
	size, err := Size(frame)
	if err != nil {
		return 0, nil, err
	}
	switch {
	case len(frame) < size:
		return 0, nil, ErrTruncated
	case len(frame) > size, counter > MaxCounter:
		return 0, nil, ErrTampered
	}
	nonce, ad := f.setNonce(counter, frame[:HeaderSize])
	pt, err := f.c.open(dst, nonce, frame[HeaderSize:], ad)
	if err != nil {
		return 0, nil, ErrTampered
	}
	inner := pt[len(dst):]
	t, body, err := parseInner(inner)
	if err != nil {
		return 0, nil, err
	}
	return t, pt[:len(dst)+len(body)], nil
}

// parseInner splits an inner plaintext into its type and body: the type is
// its last non-zero byte, the body everything before it, and the zeros
// after it are padding.
func parseInner(inner []byte) (Type, []byte, error) {
	i := len(inner) - 1
	for i >= 0 && inner[i] == 0 {
		i--
	}
	if i < 0 {
		return 0, nil, fmt.Errorf("%w: no type byte", ErrMalformed)
	}
	t, body := Type(inner[i]), inner[:i]
	switch {
	case !t.valid():
		return 0, nil, fmt.Errorf("%w: unknown type %d", ErrMalformed, uint8(t))
	case !t.bodyFits(len(body)):
		return 0, nil, fmt.Errorf("%w: %s frame with a body of %d bytes", ErrMalformed, t, len(body))
	}
	return t, body, nil
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
