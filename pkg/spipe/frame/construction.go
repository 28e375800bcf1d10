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
	aead          cipher.AEAD
	nonceSize     int
	headerInNonce bool
	ctOff         int // where the ciphertext starts in the sealed payload
}

func newConstruction(suite aead.Suite, key []byte) (construction, error) {
	if !suite.Valid() {
		return construction{}, fmt.Errorf("frame: unknown suite %d", uint8(suite))
	}
	a, err := aead.New(suite, key)
	if err != nil {
		return construction{}, fmt.Errorf("frame: %w", err)
	}
	c := construction{aead: a, nonceSize: suite.NonceSize()}
	if suite == aead.XSalsa20Poly1305 || suite == aead.XSalsa12Poly1305 {
		c.headerInNonce = true
		c.ctOff = TagSize // secretbox's box is tag || ciphertext
	}
	return c, nil
}

// seal seals the inner plaintext pt, which sits at payload[ctOff:], in
// place into payload.
func (c *construction) seal(payload, nonce, pt, ad []byte) {
	c.aead.Seal(payload[:0], nonce, pt, ad)
}

// open authenticates sealed and, only if it is authentic, writes the
// inner plaintext to dst's spare capacity, returning it.
func (c *construction) open(dst, nonce, sealed, ad []byte) ([]byte, error) {
	return c.aead.Open(dst, nonce, sealed, ad)
}
