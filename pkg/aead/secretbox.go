package aead

import (
	"crypto/subtle"

	"github.com/spipe-dev/spipe/internal/alias"
	"github.com/spipe-dev/spipe/internal/salsacore"
)

// secretboxAEAD is NaCl's crypto_secretbox (XSalsa20-Poly1305) with any
// round count: the Poly1305 key is the first 32 bytes of keystream, the
// message is encrypted with the keystream from byte 32 on (so its first 32
// bytes share block 0 with the key), the tag covers the ciphertext alone,
// and the box is tag || ciphertext.
type secretboxAEAD struct {
	key    [KeySize]byte
	rounds int
}

func newSecretbox(key []byte, rounds int) *secretboxAEAD {
	a := &secretboxAEAD{rounds: rounds}
	copy(a.key[:], key)
	return a
}

// NonceSize returns 24.
func (a *secretboxAEAD) NonceSize() int { return NonceSizeX }

// Overhead returns the tag size, 16.
func (a *secretboxAEAD) Overhead() int { return TagSize }

// init sets up s for nonce with the block counter at 0: the HSalsa subkey
// of the key and the nonce's first 16 bytes, with the last 8 as the Salsa20
// nonce.
func (a *secretboxAEAD) init(s *salsacore.State, nonce []byte) {
	var subkey [32]byte
	salsacore.HSalsa(&subkey, &a.key, (*[16]byte)(nonce[:16]), a.rounds)
	salsacore.Init(s, subkey[:], nonce[16:24])
}

// startHead generates, in one kernel call, keystream block 0 (the Poly1305
// key in its first 32 bytes) and the keystream of the first
// n0 = min(msgLen, headSize-32) message bytes, which starts at head[32].
// It returns n0 and leaves s at the block after them.
func (a *secretboxAEAD) startHead(s *salsacore.State, head *[headSize]byte, msgLen int) int {
	n0 := min(msgLen, headSize-32)
	n := roundUpBlocks(32 + n0)
	salsacore.XORKeyStreamBlocks(s, a.rounds, head[:n], head[:n])
	return n0
}

// Seal appends the secretbox of plaintext, tag || ciphertext, to dst. It
// panics if the nonce is not 24 bytes or additional data is non-empty. To
// seal in place, put the plaintext at buf[16:] and pass buf[:0] as dst; any
// other overlap of dst's new bytes with plaintext panics.
func (a *secretboxAEAD) Seal(dst, nonce, plaintext, additionalData []byte) []byte {
	if len(nonce) != NonceSizeX {
		panic("aead: wrong nonce size passed to Seal")
	}
	if len(additionalData) != 0 {
		panic(ErrAdditionalData.Error())
	}
	ret, out := sliceForAppend(dst, TagSize+len(plaintext))
	tag, ct := out[:TagSize], out[TagSize:]
	if alias.InexactOverlap(ct, plaintext) || alias.AnyOverlap(tag, plaintext) {
		panic("aead: invalid buffer overlap")
	}

	var s salsacore.State
	var head [headSize]byte
	a.init(&s, nonce)
	n0 := a.startHead(&s, &head, len(plaintext))
	mac := newMAC((*[32]byte)(head[:32]))
	subtle.XORBytes(ct[:n0], plaintext[:n0], head[32:])
	mac.Write(ct[:n0])
	// Encrypt a chunk, then MAC it while it is still in cache.
	for src, dst := plaintext[n0:], ct[n0:]; len(src) > 0; {
		n := min(len(src), chunkSize)
		salsaXOR(&s, a.rounds, dst[:n], src[:n])
		mac.Write(dst[:n])
		src, dst = src[n:], dst[n:]
	}
	mac.Sum(tag[:0])
	return ret
}

// Open authenticates the box tag || ciphertext and, if the tag is valid,
// appends the plaintext to dst. It returns ErrOpen if the box is not
// authentic, ErrNonceSize for a nonce other than 24 bytes and
// ErrAdditionalData for non-empty additional data. To open in place, pass
// box[16:16] as dst; any other overlap of dst's new bytes with the
// ciphertext panics.
//
// Open makes one pass: it MACs each chunk of ciphertext and then decrypts
// it while it is in cache, and checks the tag (in constant time) at the
// end. On failure it zeroes the len(box)-16 bytes it appended to dst, so
// no plaintext is left there; opening in place, that erases the
// ciphertext (the tag is kept).
func (a *secretboxAEAD) Open(dst, nonce, box, additionalData []byte) ([]byte, error) {
	if len(nonce) != NonceSizeX {
		return nil, ErrNonceSize
	}
	if len(additionalData) != 0 {
		return nil, ErrAdditionalData
	}
	if len(box) < TagSize {
		return nil, ErrOpen
	}
	ct := box[TagSize:]
	// A copy, because dst's new bytes may overlap the tag (not ct).
	var tag [TagSize]byte
	copy(tag[:], box[:TagSize])
	ret, out := sliceForAppend(dst, len(ct))
	if alias.InexactOverlap(out, ct) {
		panic("aead: invalid buffer overlap")
	}

	var s salsacore.State
	var head [headSize]byte
	a.init(&s, nonce)
	n0 := a.startHead(&s, &head, len(ct))
	mac := newMAC((*[32]byte)(head[:32]))
	// Each chunk is MACed before it is decrypted: in place, decrypting
	// overwrites the ciphertext.
	mac.Write(ct[:n0])
	subtle.XORBytes(out[:n0], ct[:n0], head[32:])
	for src, dst := ct[n0:], out[n0:]; len(src) > 0; {
		n := min(len(src), chunkSize)
		mac.Write(src[:n])
		salsaXOR(&s, a.rounds, dst[:n], src[:n])
		src, dst = src[n:], dst[n:]
	}
	if !mac.Verify(tag[:]) {
		clear(out)
		return nil, ErrOpen
	}
	return ret, nil
}
