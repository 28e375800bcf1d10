// Package chacha20 implements the ChaCha family of stream ciphers: ChaCha20,
// ChaCha12 and ChaCha8 with the original 64-bit nonce and 64-bit block
// counter, the IETF variant of RFC 8439 (96-bit nonce, 32-bit counter), and
// XChaCha (192-bit nonce), plus HChaCha20.
//
// A [Cipher] is a crypto/cipher.Stream with O(1) random access: [Cipher.Seek]
// moves to any byte of the key stream and [Cipher.SetCounter] to any block.
// Keystream generation runs on the fastest kernel this CPU supports; see
// [Kernel].
//
// # Guarantees
//
// The key stream is ChaCha's, byte for byte, for every variant (checked
// against the RFC 8439, XChaCha draft, Strömbergson and Bernstein test
// vectors and against golang.org/x/crypto/chacha20 where it has the
// variant), on every
// kernel, whatever the split of a message into XORKeyStream calls.
// XORKeyStream panics rather than wrap the block counter and repeat key
// stream, and allocates nothing.
//
// # Constructors
//
// [NewUnauthenticatedCipher] and [NewUnauthenticatedCipherWithRounds] are
// named as golang.org/x/crypto/chacha20 names its constructor, so that code
// moves between the two by its import path alone, and so that every call
// site says what the cipher does not do. pkg/salsa20 has the same two
// constructors.
//
// # Security
//
// ChaCha20 is unauthenticated: an attacker can flip bits of the plaintext by
// flipping bits of the ciphertext. Use it through pkg/aead unless you add
// your own authentication. A key and nonce pair must never encrypt two
// different messages, and seeking back over key stream that already
// encrypted data and encrypting new data there reuses it just the same.
// The 8-byte nonce is too short to be chosen at random for a long-lived key;
// prefer the 24-byte XChaCha nonce for random nonces.
package chacha20

import (
	"crypto/cipher"
	"errors"

	"github.com/spipe-dev/spipe/internal/chachacore"
	"github.com/spipe-dev/spipe/internal/keystream"
)

const (
	// KeySize is the size of a ChaCha20 key in bytes.
	KeySize = 32
	// KeySize128 is the size of the 128-bit key the original 8-byte-nonce
	// variant also accepts.
	KeySize128 = 16
	// NonceSizeDJB is the nonce size of the original ChaCha (64-bit nonce,
	// 64-bit block counter).
	NonceSizeDJB = 8
	// NonceSize is the nonce size of RFC 8439 ChaCha20 (96-bit nonce, 32-bit
	// block counter, so at most 256 GiB of key stream).
	NonceSize = 12
	// NonceSizeX is the nonce size of XChaCha20, long enough to be chosen at
	// random.
	NonceSizeX = 24
	// BlockSize is the size of one key stream block in bytes.
	BlockSize = 64
)

var (
	errKeySize    = errors.New("chacha20: wrong key size: need 32 bytes (or 16 with an 8-byte nonce)")
	errNonceSize  = errors.New("chacha20: wrong nonce size: need 8, 12 or 24 bytes")
	errRounds     = errors.New("chacha20: unsupported round count: need 8, 12 or 20")
	errHNonceSize = errors.New("chacha20: HChaCha20: wrong nonce size: need 16 bytes")
	errHKeySize   = errors.New("chacha20: HChaCha20: wrong key size: need 32 bytes")
)

// Cipher is a ChaCha key stream over one key and nonce. It is not safe for
// concurrent use.
type Cipher struct {
	stream keystream.Stream
}

var _ cipher.Stream = (*Cipher)(nil)

// NewUnauthenticatedCipher returns ChaCha20 (20 rounds) for key and nonce.
// The nonce length picks the variant: 8 bytes for the original ChaCha with
// a 64-bit block counter (a 32-byte key, or a 16-byte one), 12 bytes for
// RFC 8439, 24 bytes for XChaCha20 (both a 32-byte key). Other sizes are
// an error.
func NewUnauthenticatedCipher(key, nonce []byte) (*Cipher, error) {
	return NewUnauthenticatedCipherWithRounds(key, nonce, 20)
}

// NewUnauthenticatedCipherWithRounds is NewUnauthenticatedCipher with a
// chosen round count: 20, or 12 or 8 for the reduced-round ChaCha12 and
// ChaCha8, which trade security margin for speed. XChaCha12 and XChaCha8
// derive their subkey with HChaCha of the same round count. Any other
// round count is an error.
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
	var state chachacore.State
	layout := keystream.Layout{Name: "chacha20", Lo: 12, Hi: -1}
	kernel := chachacore.XORKeyStream
	switch len(nonce) {
	case NonceSizeDJB:
		if len(key) != KeySize && len(key) != KeySize128 {
			return errKeySize
		}
		chachacore.Init(&state, key, nonce)
		layout.Hi = 13
		kernel = chachacore.XORKeyStream64
	case NonceSize:
		if len(key) != KeySize {
			return errKeySize
		}
		chachacore.Init(&state, key, nonce)
	case NonceSizeX:
		if len(key) != KeySize {
			return errKeySize
		}
		var subkey [32]byte
		chachacore.HChaCha(&subkey, (*[32]byte)(key), (*[16]byte)(nonce[:16]), rounds)
		var ietfNonce [NonceSize]byte
		copy(ietfNonce[4:], nonce[16:])
		chachacore.Init(&state, subkey[:], ietfNonce[:])
		clear(subkey[:])
	default:
		return errNonceSize
	}
	c.stream.Init(&state, kernel, layout, rounds)
	clear(state[:])
	return nil
}

// XORKeyStream XORs each byte of src with the next byte of key stream and
// writes it to dst. Any split of a message into calls gives the same result
// as one call. dst and src may be the same slice (in place) but must not
// otherwise overlap, and dst must be at least as long as src; otherwise it
// panics. It also panics, before writing anything, if the message would run
// past the end of the block counter (2^32 blocks for the 12- and 24-byte
// nonces, 2^64 for the 8-byte nonce) rather than repeat key stream.
func (c *Cipher) XORKeyStream(dst, src []byte) {
	c.stream.XORKeyStream(dst, src)
}

// SetCounter moves to the start of key stream block n, discarding any
// buffered key stream. With a 12- or 24-byte nonce n must not exceed 2^32.
// Moving back and encrypting new data reuses key stream that already
// encrypted other data, which reveals the XOR of the two plaintexts.
func (c *Cipher) SetCounter(n uint64) {
	c.stream.SetCounter(n)
}

// Seek moves to byte offset of the key stream, counted from the start of
// block 0, in constant time whatever the offset. With a 12- or 24-byte
// nonce the offset must not exceed 2^38 (the end of the stream). Seeking
// back and encrypting new data reuses key stream that already encrypted
// other data, which reveals the XOR of the two plaintexts.
func (c *Cipher) Seek(offset uint64) {
	c.stream.Seek(offset)
}

// HChaCha20 derives a 32-byte subkey from a 32-byte key and a 16-byte nonce,
// as XChaCha20 does (draft-irtf-cfrg-xchacha section 2.2). The subkey is as
// secret as the key; HChaCha20 is not a general key derivation function.
func HChaCha20(key, nonce []byte) ([]byte, error) {
	if len(key) != KeySize {
		return nil, errHKeySize
	}
	if len(nonce) != 16 {
		return nil, errHNonceSize
	}
	out := make([]byte, 32)
	chachacore.HChaCha((*[32]byte)(out), (*[32]byte)(key), (*[16]byte)(nonce), 20)
	return out, nil
}

// Kernel names the key stream implementation in use on this CPU, such as
// "avx512", "avx2", "ssse3" or "generic".
func Kernel() string { return chachacore.Kernel() }
