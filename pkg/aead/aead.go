// Package aead provides authenticated encryption with additional data built on
// this module's ChaCha, Salsa20 and Poly1305 kernels:
//
//   - [NewChaCha20Poly1305]: ChaCha20-Poly1305 as RFC 8439 defines it
//     (12-byte nonce), byte-compatible with x/crypto/chacha20poly1305.New.
//   - [NewXChaCha20Poly1305]: XChaCha20-Poly1305 (24-byte nonce, safe to pick
//     at random), byte-compatible with x/crypto/chacha20poly1305.NewX.
//   - [NewXSalsa20Poly1305]: NaCl secretbox (XSalsa20-Poly1305, 24-byte
//     nonce, no additional data), byte-compatible with
//     x/crypto/nacl/secretbox: its Seal output is the secretbox box,
//     tag || ciphertext.
//   - [New] with a [Suite]: the same constructions and their reduced-round
//     variants (ChaCha12, ChaCha8, XSalsa20/12), which trade security margin
//     for speed and exist for users who explicitly choose that trade.
//
// Every AEAD here takes a 32-byte key and adds a 16-byte tag. Open
// computes the tag over the whole input and compares it, in constant time,
// before it writes a single byte of plaintext: a failed Open returns
// [ErrOpen] and leaves dst, up to its capacity, exactly as it was (opening
// in place, the ciphertext is left intact). Only then does it decrypt.
// Seal and Open allocate nothing when dst has room for the result, and an
// AEAD holds only its key, so one value may be used from any number of
// goroutines at once.
//
// Seal encrypts a large message in 32 KiB chunks, each authenticated while
// it is still in cache.
//
// A nonce must never repeat under one key: a repeat reveals the XOR of two
// plaintexts and lets an attacker forge messages. Use a counter (see
// [PutCounterNonce]) or, with the 24-byte-nonce constructions, random nonces.
package aead

import (
	"crypto/cipher"
	"errors"
)

// KeySize is the key size in bytes of every AEAD in this package.
const KeySize = 32

// TagSize is the size in bytes of the Poly1305 tag each AEAD adds (its
// Overhead).
const TagSize = 16

// NonceSize is the nonce size of the RFC 8439 constructions
// (ChaCha20-Poly1305 and its reduced-round variants).
const NonceSize = 12

// NonceSizeX is the nonce size of the extended-nonce constructions
// (XChaCha20-Poly1305 and XSalsa20-Poly1305).
const NonceSizeX = 24

// ErrOpen is returned by Open when the ciphertext, tag, nonce or additional
// data is not authentic under the key. Nothing is revealed about which.
var ErrOpen = errors.New("aead: message authentication failed")

// ErrNonceSize is returned by Open when the nonce has the wrong length for
// the construction. (Seal panics instead: cipher.AEAD's Seal has no error.)
var ErrNonceSize = errors.New("aead: wrong nonce size")

// ErrAdditionalData is returned by Open of the secretbox constructions
// (XSalsa20-Poly1305 and XSalsa20/12-Poly1305) when given non-empty
// additional data, which they cannot authenticate. Their Seal panics in
// that case.
var ErrAdditionalData = errors.New("aead: XSalsa20-Poly1305 (secretbox) takes no additional data")

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

// NewXSalsa20Poly1305 returns NaCl secretbox (XSalsa20-Poly1305) as a
// cipher.AEAD for a 32-byte key and 24-byte nonces.
//
// Its output layout is secretbox's, tag || ciphertext, not the
// ciphertext || tag of the other AEADs: Seal(nil, nonce, m, nil) equals
// secretbox.Seal(nil, m, nonce, key), and Open accepts any box made by
// secretbox.Seal. Because the output is shifted by the tag, sealing or
// opening in place (dst sharing the input's first byte) panics; use a
// separate buffer.
//
// Secretbox cannot authenticate additional data: Seal panics on non-empty
// additional data and Open returns [ErrAdditionalData].
func NewXSalsa20Poly1305(key []byte) (cipher.AEAD, error) {
	return New(XSalsa20Poly1305, key)
}

// New returns the AEAD of suite for a 32-byte key. It is the only way to get
// the reduced-round suites, which are deliberately not offered by the
// named constructors.
func New(suite Suite, key []byte) (cipher.AEAD, error) {
	if len(key) != KeySize {
		return nil, errKeySize
	}
	switch suite {
	case ChaCha20Poly1305, ChaCha12Poly1305, ChaCha8Poly1305:
		return newChaCha(key, suite.rounds(), false), nil
	case XChaCha20Poly1305:
		return newChaCha(key, 20, true), nil
	case XSalsa20Poly1305, XSalsa12Poly1305:
		return newSecretbox(key, suite.rounds()), nil
	}
	return nil, errors.New("aead: unknown suite " + suite.String())
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
