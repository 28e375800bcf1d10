package aead

import (
	"crypto/subtle"
	"encoding/binary"

	"github.com/spipe-dev/spipe/internal/alias"
	"github.com/spipe-dev/spipe/internal/chachacore"
)

// maxChaChaPlaintext is RFC 8439's limit: the 32-bit block counter gives the
// message blocks 1 to 2^32-1 (block 0 makes the Poly1305 key).
const maxChaChaPlaintext = (1<<32 - 1) * chachacore.BlockSize

// chachaAEAD is the RFC 8439 construction over ChaCha with any round count,
// and, when extended, XChaCha (HChaCha subkey, 24-byte nonce).
type chachaAEAD struct {
	key      [KeySize]byte
	rounds   int
	extended bool
}

func newChaCha(key []byte, rounds int, extended bool) *chachaAEAD {
	a := &chachaAEAD{rounds: rounds, extended: extended}
	copy(a.key[:], key)
	return a
}

// NonceSize returns 12, or 24 for XChaCha20-Poly1305.
func (a *chachaAEAD) NonceSize() int {
	if a.extended {
		return NonceSizeX
	}
	return NonceSize
}

// Overhead returns the tag size, 16.
func (a *chachaAEAD) Overhead() int { return TagSize }

// init sets up s for nonce with the block counter at 0: for XChaCha, the
// HChaCha subkey of the key and the nonce's first 16 bytes, with the last 8
// as the IETF nonce's last 8.
func (a *chachaAEAD) init(s *chachacore.State, nonce []byte) {
	if !a.extended {
		chachacore.Init(s, a.key[:], nonce)
		return
	}
	var subkey [32]byte
	chachacore.HChaCha(&subkey, &a.key, (*[16]byte)(nonce[:16]), a.rounds)
	var n [NonceSize]byte
	copy(n[4:], nonce[16:24])
	chachacore.Init(s, subkey[:], n[:])
}

// startHead generates keystream block 0 and, after it, keystream for the
// first n0 = min(msgLen, headSize-64) message bytes into head, in one kernel
// call, and returns n0. s is left at the block after them.
func (a *chachaAEAD) startHead(s *chachacore.State, head *[headSize]byte, msgLen int) int {
	n0 := min(msgLen, headSize-chachacore.BlockSize)
	n := roundUpBlocks(chachacore.BlockSize + n0)
	chachacore.XORKeyStreamBlocks(s, a.rounds, head[:n], head[:n])
	return n0
}

// Seal encrypts and authenticates plaintext and additional data and appends
// ciphertext || tag to dst. It panics if the nonce has the wrong size, if
// plaintext exceeds RFC 8439's limit, or if dst's new bytes overlap plaintext
// other than exactly (in place: dst = plaintext[:0]).
func (a *chachaAEAD) Seal(dst, nonce, plaintext, additionalData []byte) []byte {
	if len(nonce) != a.NonceSize() {
		panic("aead: wrong nonce size passed to Seal")
	}
	if uint64(len(plaintext)) > maxChaChaPlaintext {
		panic("aead: plaintext too large")
	}
	ret, out := sliceForAppend(dst, len(plaintext)+TagSize)
	if alias.InexactOverlap(out, plaintext) {
		panic("aead: invalid buffer overlap")
	}
	ct := out[:len(plaintext)]

	var s chachacore.State
	var head [headSize]byte
	a.init(&s, nonce)
	n0 := a.startHead(&s, &head, len(plaintext))
	mac := newMAC((*[32]byte)(head[:32]))
	writePadded(mac, additionalData)
	subtle.XORBytes(ct[:n0], plaintext[:n0], head[chachacore.BlockSize:])
	mac.Write(ct[:n0])
	// Encrypt a chunk, then MAC it while it is still in cache.
	for src, dst := plaintext[n0:], ct[n0:]; len(src) > 0; {
		n := min(len(src), chunkSize)
		chachaXOR(&s, a.rounds, dst[:n], src[:n])
		mac.Write(dst[:n])
		src, dst = src[n:], dst[n:]
	}
	writePad(mac, len(ct))
	writeLengths(mac, len(additionalData), len(ct))
	mac.Sum(out[len(ct):len(ct)])
	return ret
}

// Open authenticates ciphertext || tag and additional data and, if the tag
// is valid, appends the plaintext to dst. It returns ErrOpen if they are
// not authentic (ErrNonceSize for a wrong-sized nonce). It panics if dst's
// new bytes overlap ciphertext other than exactly (in place: dst =
// ciphertext[:0]).
//
// Open makes one pass: it MACs each chunk of ciphertext and then decrypts
// it while it is in cache, and checks the tag (in constant time) at the
// end. On failure it zeroes the len(ciphertext)-16 bytes it appended to
// dst, so no plaintext is left there; opening in place, that erases the
// ciphertext (the tag is kept).
func (a *chachaAEAD) Open(dst, nonce, ciphertext, additionalData []byte) ([]byte, error) {
	if len(nonce) != a.NonceSize() {
		return nil, ErrNonceSize
	}
	if len(ciphertext) < TagSize || uint64(len(ciphertext)) > maxChaChaPlaintext+TagSize {
		return nil, ErrOpen
	}
	ct := ciphertext[:len(ciphertext)-TagSize]
	// A copy, because dst's new bytes may overlap the tag (not ct).
	var tag [TagSize]byte
	copy(tag[:], ciphertext[len(ct):])
	ret, out := sliceForAppend(dst, len(ct))
	if alias.InexactOverlap(out, ct) {
		panic("aead: invalid buffer overlap")
	}

	var s chachacore.State
	var head [headSize]byte
	a.init(&s, nonce)
	n0 := a.startHead(&s, &head, len(ct))
	mac := newMAC((*[32]byte)(head[:32]))
	writePadded(mac, additionalData)
	// Each chunk is MACed before it is decrypted: in place, decrypting
	// overwrites the ciphertext.
	mac.Write(ct[:n0])
	subtle.XORBytes(out[:n0], ct[:n0], head[chachacore.BlockSize:])
	for src, dst := ct[n0:], out[n0:]; len(src) > 0; {
		n := min(len(src), chunkSize)
		mac.Write(src[:n])
		chachaXOR(&s, a.rounds, dst[:n], src[:n])
		src, dst = src[n:], dst[n:]
	}
	writePad(mac, len(ct))
	writeLengths(mac, len(additionalData), len(ct))
	if !mac.Verify(tag[:]) {
		clear(out)
		return nil, ErrOpen
	}
	return ret, nil
}

// zeros pads MAC input to a 16-byte boundary.
var zeros [16]byte

// writePadded feeds b and then zeros up to a multiple of 16 bytes.
func writePadded(mac *polyMAC, b []byte) {
	mac.Write(b)
	writePad(mac, len(b))
}

// writePad feeds the zeros that pad n bytes to a multiple of 16.
func writePad(mac *polyMAC, n int) {
	if r := n % 16; r != 0 {
		mac.Write(zeros[:16-r])
	}
}

// writeLengths feeds the RFC 8439 length block: both lengths as 64-bit
// little-endian integers.
func writeLengths(mac *polyMAC, adLen, ctLen int) {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(adLen))
	binary.LittleEndian.PutUint64(b[8:], uint64(ctLen))
	mac.Write(b[:])
}
