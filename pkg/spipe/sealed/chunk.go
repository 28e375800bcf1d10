package sealed

import (
	"crypto/cipher"
	"encoding/binary"

	"github.com/spipe-dev/spipe/pkg/aead"
)

// chunkCipher seals and opens chunks in place under a file's payload key.
// The AEAD suites' output is ciphertext || tag, the secretbox suites' tag
// || ciphertext (as pkg/aead and NaCl lay them out); either way a chunk
// buffer holds the sealed chunk at [0, n+TagSize) and its plaintext at
// [ptOff, ptOff+n). It holds only keys, so any number of goroutines use
// one at once.
type chunkCipher struct {
	aead  cipher.AEAD     // the AEAD suites
	box   *aead.Secretbox // the secretbox suites
	ptOff int             // where the plaintext sits in a chunk buffer
}

func newChunkCipher(suite aead.Suite, key []byte) (*chunkCipher, error) {
	if suite.Secretbox() {
		box, err := aead.NewSecretbox(suite, key)
		return &chunkCipher{box: box, ptOff: TagSize}, err
	}
	a, err := aead.New(suite, key)
	return &chunkCipher{aead: a}, err
}

// putNonce writes chunk index's nonce: the index as 8 little-endian bytes,
// then the final-chunk flag (1 for the final chunk, 0 for any other), then
// zeros to the nonce's size. The file's key is its own, so the nonce needs
// no per-file prefix.
func putNonce(nonce *[aead.NonceSizeX]byte, index uint64, final bool) {
	*nonce = [aead.NonceSizeX]byte{}
	binary.LittleEndian.PutUint64(nonce[:8], index)
	if final {
		nonce[8] = 1
	}
}

// seal seals the n plaintext bytes at buf[ptOff:] in place; the sealed
// chunk is buf[:n+TagSize]. nonce is scratch space: a nonce on the stack
// would escape through the cipher.AEAD interface, an allocation per chunk.
func (c *chunkCipher) seal(buf []byte, n int, index uint64, final bool, nonce *[aead.NonceSizeX]byte) {
	putNonce(nonce, index, final)
	if c.box != nil {
		c.box.Seal(buf[:0], nonce, buf[TagSize:TagSize+n])
		return
	}
	c.aead.Seal(buf[:0], nonce[:c.aead.NonceSize()], buf[:n], nil)
}

// open authenticates the sealed chunk buf[:n] (n >= TagSize) and, only if
// it is authentic, decrypts it in place to buf[ptOff:ptOff+n-TagSize].
func (c *chunkCipher) open(buf []byte, n int, index uint64, final bool, nonce *[aead.NonceSizeX]byte) error {
	return c.openTo(buf[c.ptOff:c.ptOff], buf[:n], index, final, nonce)
}

// openTo opens sealed into dst's capacity (dst is empty; its capacity
// must hold the plaintext): in place when dst starts at sealed's
// plaintext offset, or elsewhere without overlap.
func (c *chunkCipher) openTo(dst, sealed []byte, index uint64, final bool, nonce *[aead.NonceSizeX]byte) error {
	putNonce(nonce, index, final)
	var err error
	if c.box != nil {
		_, err = c.box.Open(dst, nonce, sealed)
	} else {
		_, err = c.aead.Open(dst, nonce[:c.aead.NonceSize()], sealed, nil)
	}
	return err
}
