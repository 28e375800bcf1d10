package sealed

import (
	"crypto/hmac"
	"fmt"
	"io"

	"github.com/spipe-dev/spipe/pkg/aead"
)

// openHeader reads and checks a file's header from its first HeaderSize
// bytes: the parse of ParseHeader, the kind of secret, the Argon2id
// ceiling of opts, then the MAC under s. It returns the header and the
// chunk cipher of the file.
func openHeader(b []byte, s *Secret, opts *Options) (*Header, *chunkCipher, error) {
	h, err := ParseHeader(b)
	if err != nil {
		return nil, nil, fmt.Errorf("sealed: %w", err)
	}
	ceiling := opts.argon2Ceiling()
	keys, err := s.derive(h, b, &ceiling)
	if err != nil {
		return nil, nil, fmt.Errorf("sealed: %w", err)
	}
	if !hmac.Equal(keys.headerMAC(b), b[offMAC:offChecksum]) {
		return nil, nil, fmt.Errorf("sealed: %w: the header does not verify under this %s: "+
			"the file was sealed under another one, or its header was altered on purpose (the checksum only catches accidents)",
			ErrWrongKey, s.kind())
	}
	c, err := newChunkCipher(h.Suite, keys.payload[:])
	clear(keys.payload[:])
	if err != nil {
		return nil, nil, fmt.Errorf("sealed: %w", err)
	}
	return h, c, nil
}

// readHeader reads a header from r: ErrNotSealed for an empty input,
// ParseHeader's errors for one cut short.
func readHeader(r io.Reader, b []byte) error {
	n, err := io.ReadFull(r, b[:HeaderSize])
	switch {
	case n == 0 && err == io.EOF:
		return fmt.Errorf("sealed: %w (the input is empty)", ErrNotSealed)
	case err == io.ErrUnexpectedEOF:
		_, perr := ParseHeader(b[:n])
		return fmt.Errorf("sealed: %w", perr)
	case err != nil:
		return fmt.Errorf("sealed: reading the header: %w", err)
	}
	return nil
}

// opener is a pipeline's work for the readers: open a chunk in place,
// and if it fails, say why.
type opener struct {
	c         *chunkCipher
	chunkSize int
}

func (o opener) process(j *job) {
	if err := o.open(j.buf, j.n, j.index, j.final, &j.nonce); err != nil {
		j.err = &ChunkError{Index: j.index, Offset: chunkOffset(j.index, o.chunkSize), Err: err}
	}
}

// open opens the sealed chunk buf[:n], number index, final or not. A
// chunk that fails is opened again with the other finality to tell a file
// cut after a chunk (a non-final chunk where the file ends) and appended
// data (a final chunk with more after it) from damage; that costs a second
// open only on failure.
func (o opener) open(buf []byte, n int, index uint64, final bool, nonce *[aead.NonceSizeX]byte) error {
	switch {
	case n < TagSize:
		return fmt.Errorf("%w: %d bytes, too few to hold a chunk's tag", ErrTruncated, n)
	case n == TagSize && index > 0:
		// Only an empty file's one chunk is empty: this is a file cut
		// inside its final chunk (or a writer breaking the format).
		return fmt.Errorf("%w: a final chunk of %d bytes, which only an empty file's chunk 0 may be", ErrTruncated, n)
	case n > o.chunkSize+TagSize:
		panic("sealed: chunk larger than the chunk size")
	}
	if o.c.open(buf, n, index, final, nonce) == nil {
		return nil
	}
	if o.c.open(buf, n, index, !final, nonce) == nil {
		if final {
			return fmt.Errorf("%w: the file ends after this chunk, which is not the final one", ErrTruncated)
		}
		return fmt.Errorf("%w: this is the final chunk, but the file goes on", ErrTrailingData)
	}
	if final && n < o.chunkSize+TagSize {
		return fmt.Errorf("%w (or the file was cut inside this final chunk)", ErrTampered)
	}
	return ErrTampered
}
