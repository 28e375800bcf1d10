// Package salsa20 implements the Salsa20 family of stream ciphers: Salsa20/20,
// Salsa20/12 and Salsa20/8 with a 64-bit nonce and 64-bit block counter,
// XSalsa20 (192-bit nonce), HSalsa20 and the bare Salsa20 core.
//
// A [Cipher] is a crypto/cipher.Stream with O(1) random access: [Cipher.Seek]
// moves to any byte of the key stream and [Cipher.SetCounter] to any block.
// Keystream generation runs on the fastest kernel this CPU supports; see
// [Kernel].
//
// # Guarantees
//
// The key stream is Salsa20's, byte for byte, for every variant (checked
// against the Salsa20 specification, eSTREAM, NaCl and Crypto++ test
// vectors and
// against golang.org/x/crypto/salsa20 where it has the variant), on every
// kernel, whatever the split of a message into XORKeyStream calls.
// XORKeyStream panics rather than wrap the 64-bit block counter and repeat
// key stream, and allocates nothing.
//
// # Constructors
//
// [NewUnauthenticatedCipher] and [NewUnauthenticatedCipherWithRounds] have
// the names of pkg/chacha20's constructors, which are
// golang.org/x/crypto/chacha20's: one naming for both ciphers, and one that
// says at every call site what the cipher does not do.
//
// # Security
//
// Salsa20 is unauthenticated: an attacker can flip bits of the plaintext by
// flipping bits of the ciphertext. Use it through pkg/aead (XSalsa20-Poly1305,
// NaCl's secretbox) unless you add your own authentication. A key and nonce
// pair must never encrypt two different messages; seeking back and
// encrypting new data over used key stream reuses it just the same. The
// 8-byte nonce is too short to be chosen at random for a long-lived key;
// prefer XSalsa20's 24-byte nonce for random nonces.
package salsa20

import (
	"crypto/cipher"
	"errors"

	"github.com/spipe-dev/spipe/internal/keystream"
	"github.com/spipe-dev/spipe/internal/salsacore"
)

const (
	// KeySize is the size of a Salsa20 key in bytes.
	KeySize = 32
	// KeySize128 is the size of the 128-bit key Salsa20 also accepts with an
	// 8-byte nonce.
	KeySize128 = 16
	// NonceSize is the Salsa20 nonce size (64-bit nonce, 64-bit counter).
	NonceSize = 8
	// NonceSizeX is the XSalsa20 nonce size, long enough to be chosen at
	// random.
	NonceSizeX = 24
	// BlockSize is the size of one key stream block in bytes.
	BlockSize = 64
)

var (
	errKeySize    = errors.New("salsa20: wrong key size: need 32 bytes (or 16 with an 8-byte nonce)")
	errNonceSize  = errors.New("salsa20: wrong nonce size: need 8 or 24 bytes")
	errRounds     = errors.New("salsa20: unsupported round count: need 8, 12 or 20")
	errHNonceSize = errors.New("salsa20: HSalsa20: wrong nonce size: need 16 bytes")
	errHKeySize   = errors.New("salsa20: HSalsa20: wrong key size: need 32 bytes")
)

// Cipher is a Salsa20 key stream over one key and nonce. It is not safe for
// concurrent use.
type Cipher struct {
	stream keystream.Stream
}

var _ cipher.Stream = (*Cipher)(nil)

// NewUnauthenticatedCipher returns Salsa20/20 for key and nonce. The nonce
// length picks the variant: 8 bytes for Salsa20 (a 32-byte key, or a
// 16-byte one), 24 bytes for XSalsa20 (a 32-byte key). Other sizes are an
// error.
func NewUnauthenticatedCipher(key, nonce []byte) (*Cipher, error) {
	return NewUnauthenticatedCipherWithRounds(key, nonce, 20)
}

// NewUnauthenticatedCipherWithRounds is NewUnauthenticatedCipher with a
// chosen round count: 20, or 12 or 8 for Salsa20/12 and Salsa20/8, which
// trade security margin for speed. XSalsa20/12 and XSalsa20/8 derive their
// subkey with HSalsa of the same round count. Any other round count is an
// error.
func NewUnauthenticatedCipherWithRounds(key, nonce []byte, rounds int) (*Cipher, error) {
	c := new(Cipher)
	if err := c.init(key, nonce, rounds); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Cipher) init(key, nonce []byte, rounds int) error {
	if rounds != 20 && rounds != 12 && rounds != 8 {
		return errRounds
	}
	var state salsacore.State
	switch len(nonce) {
	case NonceSize:
		if len(key) != KeySize && len(key) != KeySize128 {
			return errKeySize
		}
		salsacore.Init(&state, key, nonce)
	case NonceSizeX:
		if len(key) != KeySize {
			return errKeySize
		}
		var subkey [32]byte
		salsacore.HSalsa(&subkey, (*[32]byte)(key), (*[16]byte)(nonce[:16]), rounds)
		salsacore.Init(&state, subkey[:], nonce[16:])
		clear(subkey[:])
	default:
		return errNonceSize
	}
	layout := keystream.Layout{Name: "salsa20", Lo: 8, Hi: 9}
	c.stream.Init(&state, salsacore.XORKeyStream, layout, rounds)
	clear(state[:])
	return nil
}

// XORKeyStream XORs each byte of src with the next byte of key stream and
// writes it to dst. Any split of a message into calls gives the same result
// as one call. dst and src may be the same slice (in place) but must not
// otherwise overlap, and dst must be at least as long as src; otherwise it
// panics. It also panics, before writing anything, if the message would run
// past block 2^64-1 rather than repeat key stream.
func (c *Cipher) XORKeyStream(dst, src []byte) {
	c.stream.XORKeyStream(dst, src)
}

// SetCounter moves to the start of key stream block n, discarding any
// buffered key stream. Moving back and encrypting new data reuses key
// stream that already encrypted other data, which reveals the XOR of the
// two plaintexts.
func (c *Cipher) SetCounter(n uint64) {
	c.stream.SetCounter(n)
}

// Seek moves to byte offset of the key stream, counted from the start of
// block 0, in constant time whatever the offset. Seeking back and
// encrypting new data reuses key stream that already encrypted other data,
// which reveals the XOR of the two plaintexts.
func (c *Cipher) Seek(offset uint64) {
	c.stream.Seek(offset)
}

// HSalsa20 derives a 32-byte subkey from a 32-byte key and a 16-byte nonce,
// as XSalsa20 and NaCl's crypto_box do. The subkey is as secret as the key.
func HSalsa20(key, nonce []byte) ([]byte, error) {
	if len(key) != KeySize {
		return nil, errHKeySize
	}
	if len(nonce) != 16 {
		return nil, errHNonceSize
	}
	out := make([]byte, 32)
	salsacore.HSalsa((*[32]byte)(out), (*[32]byte)(key), (*[16]byte)(nonce), 20)
	return out, nil
}

// Core writes to out the Salsa20 core of in: rounds rounds (8, 12 or 20) of
// the Salsa20 permutation followed by the addition of in, as in the Salsa20
// specification (its "Salsa20 hash") and scrypt's Salsa20/8 core. Any other
// round count panics. out and in may be the same block.
func Core(out, in *[64]byte, rounds int) {
	if rounds != 20 && rounds != 12 && rounds != 8 {
		panic(errRounds)
	}
	salsacore.Core(out, in, rounds)
}

// Kernel names the key stream implementation in use on this CPU, such as
// "avx512", "avx2", "ssse3" or "generic".
func Kernel() string { return salsacore.Kernel() }
