// Package aead provides authenticated encryption built on this module's
// ChaCha, Salsa20 and Poly1305 kernels, in two shapes.
//
// [crypto/cipher.AEAD] values, with additional data and the output
// ciphertext || tag:
//
//   - [NewChaCha20Poly1305]: ChaCha20-Poly1305 as RFC 8439 defines it
//     (12-byte nonce), byte-compatible with x/crypto/chacha20poly1305.New.
//   - [NewXChaCha20Poly1305]: XChaCha20-Poly1305 (24-byte nonce, safe to pick
//     at random), byte-compatible with x/crypto/chacha20poly1305.NewX.
//   - [New] with a [Suite]: the same constructions and the reduced-round
//     ChaCha12- and ChaCha8-Poly1305, which trade security margin for speed
//     and exist for users who explicitly choose that trade.
//
// [Secretbox], NaCl's crypto_secretbox (XSalsa20-Poly1305 and its
// reduced-round XSalsa20/12 variant, from [NewSecretbox]): a 24-byte nonce,
// no additional data and the output tag || ciphertext, byte-compatible with
// x/crypto/nacl/secretbox. It is deliberately not a cipher.AEAD: it cannot
// authenticate additional data and its output is not laid out as one.
//
// # Guarantees
//
// Every construction here takes a 32-byte key and adds a 16-byte Poly1305
// tag. Every Open computes the tag over the whole input and compares it, in
// constant time, before it writes a single byte to dst: a failed Open
// returns [ErrOpen] and leaves dst, up to its capacity, exactly as it was
// (opening in place, the ciphertext is left intact). Only a valid tag
// lets plaintext out. (On AVX-512, the ChaCha suites' Open of 1 KiB and
// more (more than 1 KiB with AVX-512 IFMA), when the message's last group
// of 32 blocks has 16 or more, decrypts its first 1 KiB into a buffer on
// its own stack while it computes the key of the tag, and clears that
// buffer on failure; and an Open that one kernel call does whole (below)
// keeps the message's key stream in its kernel's frame until the tag is
// checked, and clears it on failure.)
//
// Every cipher.AEAD here keeps the interface's whole contract: additional
// data of any length, appending to dst, and in-place operation with
// dst = plaintext[:0] (Seal) or dst = ciphertext[:0] (Open). The bytes Seal
// or Open appends to dst must start exactly at the input or not overlap it
// at all (for Open, the whole ciphertext including its tag), and must not
// overlap the additional data; any other overlap panics before anything
// is written.
// [Secretbox] documents its own in-place layout.
//
// Seal and Open allocate nothing when dst has room for the result. A value
// holds only its key, so one may be used from any number of goroutines at
// once. On CPUs with AVX-512, a message of up to 256 bytes (480 for a
// secretbox) is sealed or opened in one kernel call, Poly1305 included,
// and with AVX-512 IFMA and VBMI2 so is a ChaCha suite's message of up to
// 1 KiB and a secretbox of up to 1056 bytes.
// Seal encrypts a large message in 32 KiB chunks, each authenticated while
// it is still in cache.
//
// # Nonces
//
// A nonce must never repeat under one key: a repeat reveals the XOR of two
// plaintexts and lets an attacker forge messages. Use a counter (see
// [PutCounterNonce]) or, with the 24-byte-nonce constructions, random
// nonces.
package aead

import (
	"crypto/cipher"
	"errors"

	"github.com/spipe-dev/spipe/internal/alias"
)

// KeySize is the key size in bytes of every construction in this package.
const KeySize = 32

// TagSize is the size in bytes of the Poly1305 tag each construction adds
// (an AEAD's Overhead).
const TagSize = 16

// NonceSize is the nonce size of the RFC 8439 constructions
// (ChaCha20-Poly1305 and its reduced-round variants).
const NonceSize = 12

// NonceSizeX is the nonce size of the extended-nonce constructions
// (XChaCha20-Poly1305 and the secretbox suites).
const NonceSizeX = 24

// ErrOpen is returned by Open when the ciphertext, tag, nonce or additional
// data is not authentic under the key, or the input is too short to hold a
// tag. Nothing is revealed about which.
var ErrOpen = errors.New("aead: message authentication failed")

var errKeySize = errors.New("aead: wrong key size: need 32 bytes")

// NewChaCha20Poly1305 returns ChaCha20-Poly1305 (RFC 8439) for a 32-byte key.
// Its nonce is 12 bytes and its output is ciphertext || tag. A message may
// hold at most 274,877,906,880 bytes ((2^32-1)*64, RFC 8439's limit); Seal
// panics beyond that and Open fails.
func NewChaCha20Poly1305(key []byte) (cipher.AEAD, error) {
	return New(ChaCha20Poly1305, key)
}

// NewXChaCha20Poly1305 returns XChaCha20-Poly1305 for a 32-byte key: a
// 24-byte nonce, random nonces are safe, output ciphertext || tag,
// byte-compatible with x/crypto/chacha20poly1305.NewX.
func NewXChaCha20Poly1305(key []byte) (cipher.AEAD, error) {
	return New(XChaCha20Poly1305, key)
}

// New returns the cipher.AEAD of suite for a 32-byte key. It is the only
// way to get the reduced-round ChaCha suites, which the named constructors
// deliberately do not offer. For a secretbox suite it returns an error
// naming [NewSecretbox].
//
// Seal and Open of the returned AEAD panic if the nonce is not
// suite.NonceSize() bytes or on an overlap the package documentation
// forbids; Open returns [ErrOpen] for anything not authentic.
func New(suite Suite, key []byte) (cipher.AEAD, error) {
	switch {
	case !suite.Valid():
		return nil, errors.New("aead: unknown suite " + suite.String())
	case suite.Secretbox():
		return nil, errors.New("aead: " + suite.String() +
			" is a secretbox, not a cipher.AEAD: use NewSecretbox")
	case len(key) != KeySize:
		return nil, errKeySize
	}
	return newChaCha(key, suite.rounds(), suite == XChaCha20Poly1305), nil
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

// checkOverlap panics unless out, the bytes Seal or Open appends to dst,
// starts exactly at in (in place) or does not overlap it, and does not
// overlap the additional data ad at all.
func checkOverlap(out, in, ad []byte) {
	if alias.InexactOverlap(out, in) || alias.AnyOverlap(out, ad) {
		panic("aead: invalid buffer overlap")
	}
}
