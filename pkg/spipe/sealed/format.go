package sealed

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"fmt"

	"github.com/spipe-dev/spipe/pkg/aead"
)

// Version is the format version this package writes and reads.
const Version = 1

// HeaderSize is the size in bytes of a version-1 header; the first chunk
// starts right after it.
const HeaderSize = 96

// TagSize is what sealing adds to each chunk: one Poly1305 tag.
const TagSize = aead.TagSize

// The chunk sizes a file may record: powers of two from MinChunkSize to
// MaxChunkSize. The upper bound is what bounds a reader's memory for any
// input (docs/FILE.md, "Limits").
const (
	MinChunkSize = 1 << 10
	MaxChunkSize = 1 << 24
)

// DefaultChunkSize is the chunk size Writer uses unless told otherwise,
// 256 KiB: the fastest for sealing and opening through the tool with one
// worker and two on this project's reference machine, and still inside a
// core's L2 cache (docs/FILE.md, "Choosing the chunk size", has the
// measurement).
const DefaultChunkSize = 1 << 18

// DefaultSuite is the suite Writer uses unless told otherwise: the one the
// pipe prefers.
const DefaultSuite = aead.ChaCha20Poly1305

// magic opens every spipe file. As PNG's signature does, it starts with a
// byte above 0x7f and holds CR LF, so a file passed through a 7-bit or
// line-ending-converting channel no longer looks like one.
var magic = [8]byte{0x89, 's', 'p', 'i', 'p', 'e', '\r', '\n'}

// The key kinds, header byte 10.
const (
	kindKey        = 1 // a spipe key file
	kindPassphrase = 2 // a passphrase through Argon2id
)

// Header field offsets (docs/FILE.md, "The header").
const (
	offVersion   = 8
	offSuite     = 9
	offKind      = 10
	offThreads   = 11
	offChunkSize = 12
	offTime      = 16
	offMemory    = 20
	offSalt      = 24
	offMAC       = 56
	offChecksum  = 88
	saltSize     = 32
	checksumSize = 8
)

// Header is a file's header as parsed, before its MAC is checked.
type Header struct {
	// Suite seals every chunk.
	Suite aead.Suite
	// ChunkSize is the plaintext size of every chunk but the last.
	ChunkSize int
	// Argon2 holds the passphrase KDF's parameters for a file sealed
	// with a passphrase; it is nil for a file sealed with a key.
	Argon2 *Argon2Params
	// Salt is the file's random salt: it makes the file's keys its own.
	Salt [saltSize]byte
}

// ParseHeader parses the first HeaderSize bytes of a file, in the order
// docs/FILE.md gives: the magic (ErrNotSealed), the version
// (ErrUnsupportedVersion), the checksum (ErrDamagedHeader), then the
// fields (ErrMalformedHeader). Fewer bytes than a header, after a whole
// magic, are ErrTruncated. It does not check the MAC, which needs the key
// (the Reader and ReaderAt do).
func ParseHeader(b []byte) (*Header, error) {
	if len(b) < len(magic) || !bytes.Equal(b[:len(magic)], magic[:]) {
		if len(b) < len(magic) && bytes.HasPrefix(magic[:], b) && len(b) > 0 {
			return nil, fmt.Errorf("%w: %d bytes, cut inside the header", ErrTruncated, len(b))
		}
		return nil, ErrNotSealed
	}
	if len(b) <= offVersion {
		return nil, fmt.Errorf("%w: %d bytes, cut inside the header", ErrTruncated, len(b))
	}
	if v := b[offVersion]; v != Version {
		return nil, fmt.Errorf("%w %d (this version reads %d)", ErrUnsupportedVersion, v, Version)
	}
	if len(b) < HeaderSize {
		return nil, fmt.Errorf("%w: %d bytes, cut inside the header", ErrTruncated, len(b))
	}
	b = b[:HeaderSize]
	sum := sha256.Sum256(b[:offChecksum])
	if subtle.ConstantTimeCompare(sum[:checksumSize], b[offChecksum:]) != 1 {
		return nil, ErrDamagedHeader
	}
	h := &Header{Suite: aead.Suite(b[offSuite])}
	copy(h.Salt[:], b[offSalt:offMAC])
	if !h.Suite.Valid() {
		return nil, fmt.Errorf("%w: unknown suite %d", ErrMalformedHeader, b[offSuite])
	}
	cs := binary.BigEndian.Uint32(b[offChunkSize:])
	if cs < MinChunkSize || cs > MaxChunkSize || cs&(cs-1) != 0 {
		return nil, fmt.Errorf("%w: chunk size %d is not a power of two from %d to %d",
			ErrMalformedHeader, cs, MinChunkSize, MaxChunkSize)
	}
	h.ChunkSize = int(cs)
	p := Argon2Params{
		Threads:   b[offThreads],
		Time:      binary.BigEndian.Uint32(b[offTime:]),
		MemoryKiB: binary.BigEndian.Uint32(b[offMemory:]),
	}
	switch b[offKind] {
	case kindKey:
		if p != (Argon2Params{}) {
			return nil, fmt.Errorf("%w: KDF parameters in a file sealed with a key", ErrMalformedHeader)
		}
	case kindPassphrase:
		if err := p.check(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrMalformedHeader, err)
		}
		h.Argon2 = &p
	default:
		return nil, fmt.Errorf("%w: unknown key kind %d", ErrMalformedHeader, b[offKind])
	}
	return h, nil
}

// marshal writes the header's fields into b[:HeaderSize], leaving the MAC
// and checksum for seal.
func (h *Header) marshal(b []byte) {
	b = b[:HeaderSize]
	clear(b)
	copy(b, magic[:])
	b[offVersion] = Version
	b[offSuite] = byte(h.Suite)
	binary.BigEndian.PutUint32(b[offChunkSize:], uint32(h.ChunkSize))
	b[offKind] = kindKey
	if h.Argon2 != nil {
		b[offKind] = kindPassphrase
		b[offThreads] = h.Argon2.Threads
		binary.BigEndian.PutUint32(b[offTime:], h.Argon2.Time)
		binary.BigEndian.PutUint32(b[offMemory:], h.Argon2.MemoryKiB)
	}
	copy(b[offSalt:], h.Salt[:])
}

// putChecksum writes the checksum of a header whose other 88 bytes are
// final.
func putChecksum(b []byte) {
	sum := sha256.Sum256(b[:offChecksum])
	copy(b[offChecksum:HeaderSize], sum[:checksumSize])
}

// chunkCount returns the number of chunks of a plaintext of size bytes.
// An empty plaintext is one empty chunk.
func chunkCount(size int64, chunkSize int) int64 {
	if size == 0 {
		return 1
	}
	return (size + int64(chunkSize) - 1) / int64(chunkSize)
}

// SealedSize returns the size of the file that seals a plaintext of size
// bytes in chunks of chunkSize: the header, the plaintext and one tag per
// chunk.
func SealedSize(size int64, chunkSize int) int64 {
	return HeaderSize + size + TagSize*chunkCount(size, chunkSize)
}

// layout returns the number of chunks of a file of sealedSize bytes with
// chunks of chunkSize, and the sealed size of its final chunk. ok is false
// if no file this format allows has that size (docs/FILE.md, "Sizes"):
// the file is then cut short or has bytes appended, which the caller
// tells apart by opening chunks.
func layout(sealedSize int64, chunkSize int) (chunks, lastSealed int64, ok bool) {
	payload := sealedSize - HeaderSize
	if payload <= 0 {
		return 0, 0, false
	}
	full := int64(chunkSize) + TagSize
	chunks = (payload + full - 1) / full
	lastSealed = payload - (chunks-1)*full
	return chunks, lastSealed, lastSealed > TagSize || (lastSealed == TagSize && chunks == 1)
}
