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
// key in its first 32 bytes) and the keystream of the first msgLen message
// bytes, which starts at head[32]; head must hold them rounded up to whole
// blocks. s is left at the block after them.
func (a *secretboxAEAD) startHead(s *salsacore.State, head []byte, msgLen int) {
	n := roundUpBlocks(32 + msgLen)
	salsacore.XORKeyStream(s, a.rounds, head[:n], head[:n])
}

// secretboxHeadBytes is how many message bytes' keystream a buffer of that
// many blocks holds after the Poly1305 key.
func secretboxHeadBytes(blocks int) int { return blocks*blockSize - 32 }

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
	a.init(&s, nonce)
	// As in the ChaCha AEADs, short messages use a stack buffer only as
	// large as they need, and longer ones go straight through the kernel.
	switch n := len(plaintext); {
	case n <= secretboxHeadBytes(2):
		var head [2 * blockSize]byte
		a.sealShort(&s, head[:], tag, ct, plaintext)
	case n <= secretboxHeadBytes(8):
		var head [8 * blockSize]byte
		a.sealShort(&s, head[:], tag, ct, plaintext)
	case n <= secretboxHeadBytes(headBlocks):
		var head [headSize]byte
		a.sealShort(&s, head[:], tag, ct, plaintext)
	default:
		a.sealLong(&s, tag, ct, plaintext)
	}
	return ret
}

// sealShort encrypts plaintext into ct and writes its tag, for a plaintext
// whose keystream fits in head after the Poly1305 key.
func (a *secretboxAEAD) sealShort(s *salsacore.State, head, tag, ct, plaintext []byte) {
	a.startHead(s, head, len(plaintext))
	subtle.XORBytes(ct, plaintext, head[32:])
	sumMAC((*[TagSize]byte)(tag), ct, (*[32]byte)(head[:32]))
}

// sealLong is sealShort for longer plaintexts. Block 0 and the keystream
// of the first secretboxHeadBytes(headBlocks) message bytes come from one
// kernel call into a stack buffer, as in sealShort: block 0 in a call of
// its own is a latency-bound chain that costs about as much as a
// 16-block group, and the message after those bytes starts at a block
// boundary, so each chunk of it goes straight through the XOR-fused kernel
// in whole groups, MACed while it is still in cache.
func (a *secretboxAEAD) sealLong(s *salsacore.State, tag, ct, plaintext []byte) {
	var head [headSize]byte
	first := secretboxHeadBytes(headBlocks)
	a.startHead(s, head[:], first)
	mac := newMAC((*[32]byte)(head[:32]))
	subtle.XORBytes(ct[:first], plaintext[:first], head[32:])
	// The bytes from the head join the first chunk's Write.
	for macked, off := 0, first; off < len(ct); {
		n := min(len(ct)-off, chunkSize)
		salsacore.XORKeyStream(s, a.rounds, ct[off:off+n], plaintext[off:off+n])
		mac.Write(ct[macked : off+n])
		macked, off = off+n, off+n
	}
	mac.Sum(tag[:0])
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
	a.init(&s, nonce)
	var ok bool
	switch n := len(ct); {
	case n <= secretboxHeadBytes(2):
		var head [2 * blockSize]byte
		ok = a.openShort(&s, head[:], out, ct, &tag)
	case n <= secretboxHeadBytes(8):
		var head [8 * blockSize]byte
		ok = a.openShort(&s, head[:], out, ct, &tag)
	case n <= secretboxHeadBytes(headBlocks):
		var head [headSize]byte
		ok = a.openShort(&s, head[:], out, ct, &tag)
	default:
		ok = a.openLong(&s, out, ct, &tag)
	}
	if !ok {
		clear(out)
		return nil, ErrOpen
	}
	return ret, nil
}

// openShort decrypts ct into out and reports whether tag is valid, for a
// ciphertext whose keystream fits in head after the Poly1305 key. The MAC
// reads ct before it is decrypted: in place, decrypting overwrites it.
func (a *secretboxAEAD) openShort(s *salsacore.State, head, out, ct []byte, tag *[TagSize]byte) bool {
	a.startHead(s, head, len(ct))
	var want [TagSize]byte
	sumMAC(&want, ct, (*[32]byte)(head[:32]))
	subtle.XORBytes(out, ct, head[32:])
	return tagsEqual(&want, tag)
}

// openLong is openShort for longer ciphertexts, with the head of sealLong:
// the rest goes straight through the XOR-fused kernel in chunks, each MACed
// before it is decrypted.
func (a *secretboxAEAD) openLong(s *salsacore.State, out, ct []byte, tag *[TagSize]byte) bool {
	var head [headSize]byte
	first := secretboxHeadBytes(headBlocks)
	a.startHead(s, head[:], first)
	mac := newMAC((*[32]byte)(head[:32]))
	for macked, off := 0, first; off < len(ct); {
		n := min(len(ct)-off, chunkSize)
		mac.Write(ct[macked : off+n])
		if macked == 0 {
			subtle.XORBytes(out[:first], ct[:first], head[32:])
		}
		salsacore.XORKeyStream(s, a.rounds, out[off:off+n], ct[off:off+n])
		macked, off = off+n, off+n
	}
	var want [TagSize]byte
	mac.Sum(want[:0])
	return tagsEqual(&want, tag)
}
