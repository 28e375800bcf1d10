package frame

import (
	"crypto/cipher"
	"fmt"

	"github.com/spipe-dev/spipe/pkg/aead"
)

// construction is a suite's AEAD as the frame layer drives it. The AEAD
// suites authenticate the header as additional data and put their tag
// after the ciphertext; the secretbox suites take no additional data, so
// the header goes into the nonce, and their tag comes first.
type construction struct {
	aead      cipher.AEAD     // the AEAD suites
	box       *aead.Secretbox // the secretbox suites
	nonceSize int
	ctOff     int // where the ciphertext starts in the sealed payload
}

func newConstruction(suite aead.Suite, key []byte) (construction, error) {
	if !suite.Valid() {
		return construction{}, fmt.Errorf("frame: unknown suite %d", uint8(suite))
	}
	c := construction{nonceSize: suite.NonceSize()}
	var err error
	if suite.Secretbox() {
		c.box, err = aead.NewSecretbox(suite, key)
		c.ctOff = TagSize // secretbox's box is tag || ciphertext
	} else {
		c.aead, err = aead.New(suite, key)
	}
	if err != nil {
		return construction{}, fmt.Errorf("frame: %w", err)
	}
	return c, nil
}

// headerInNonce reports whether the header goes into the nonce because
// the construction takes no additional data.
func (c *construction) headerInNonce() bool { return c.box != nil }

// seal seals the inner plaintext pt, which sits at payload[ctOff:], in
// place into payload.
func (c *construction) seal(payload, nonce, pt, ad []byte) {
	if c.box != nil {
		c.box.Seal(payload[:0], (*[aead.NonceSizeX]byte)(nonce), pt)
		return
	}
	c.aead.Seal(payload[:0], nonce, pt, ad)
}

// open authenticates sealed and, only if it is authentic, writes the
// inner plaintext to dst's spare capacity, returning dst extended by it.
func (c *construction) open(dst, nonce, sealed, ad []byte) ([]byte, error) {
	if c.box != nil {
		return c.box.Open(dst, (*[aead.NonceSizeX]byte)(nonce), sealed)
	}
	return c.aead.Open(dst, nonce, sealed, ad)
}
