package aead

import (
	"crypto/subtle"
	"errors"

	"github.com/spipe-dev/spipe/internal/aeadcore"
	"github.com/spipe-dev/spipe/internal/alias"
	"github.com/spipe-dev/spipe/internal/salsacore"
)

// Secretbox is NaCl's crypto_secretbox: XSalsa20-Poly1305 (or, for
// [XSalsa12Poly1305], the same over XSalsa20/12) under one 32-byte key. It
// seals a message into a box, tag || ciphertext, with a 24-byte nonce and
// no additional data, byte for byte as x/crypto/nacl/secretbox does at 20
// rounds.
//
// It is not a crypto/cipher.AEAD, and does not pretend to be: it cannot
// authenticate additional data, and its tag comes before the ciphertext,
// so the AEAD in-place idiom (dst = plaintext[:0]) does not fit it. Its
// own in-place layout is the message at buf[16:] sealed into buf[:0], and
// the box at buf opened into buf[16:16].
//
// Construction: the first 32 bytes of keystream are the one-time Poly1305
// key, the message is encrypted with the keystream from byte 32 on (so its
// first 32 bytes share block 0 with the key), and the tag covers the
// ciphertext alone.
//
// A Secretbox holds only its key, so one may be used from any number of
// goroutines at once. The zero Secretbox is not usable: its methods panic.
type Secretbox struct {
	key    [KeySize]byte
	rounds int
}

// NewSecretbox returns the secretbox of suite, [XSalsa20Poly1305] or
// [XSalsa12Poly1305], for a 32-byte key. Any other suite is an error
// naming [New].
func NewSecretbox(suite Suite, key []byte) (*Secretbox, error) {
	switch {
	case !suite.Valid():
		return nil, errors.New("aead: unknown suite " + suite.String())
	case !suite.Secretbox():
		return nil, errors.New("aead: " + suite.String() + " is not a secretbox: use New")
	case len(key) != KeySize:
		return nil, errKeySize
	}
	b := &Secretbox{rounds: suite.rounds()}
	copy(b.key[:], key)
	return b, nil
}

// init sets up s for nonce with the block counter at 0: the HSalsa subkey
// of the key and the nonce's first 16 bytes, with the last 8 as the Salsa20
// nonce. It panics for a Secretbox that NewSecretbox did not make.
func (b *Secretbox) init(s *salsacore.State, nonce *[NonceSizeX]byte) {
	if b.rounds == 0 {
		panic("aead: Secretbox used without NewSecretbox")
	}
	var subkey [32]byte
	salsacore.HSalsa(&subkey, &b.key, (*[16]byte)(nonce[:16]), b.rounds)
	salsacore.Init(s, subkey[:], nonce[16:24])
}

// startHead generates, in one kernel call, keystream block 0 (the Poly1305
// key in its first 32 bytes) and the keystream of the first msgLen message
// bytes, which starts at head[32]; head must hold them rounded up to whole
// blocks. s is left at the block after them.
func (b *Secretbox) startHead(s *salsacore.State, head []byte, msgLen int) {
	n := roundUpBlocks(32 + msgLen)
	salsacore.XORKeyStream(s, b.rounds, head[:n], head[:n])
}

// secretboxHeadBytes is how many message bytes' keystream a buffer of that
// many blocks holds after the Poly1305 key.
func secretboxHeadBytes(blocks int) int { return blocks*blockSize - 32 }

// Seal appends the box of message, tag || ciphertext (len(message)+16
// bytes), to dst and returns the extended slice.
//
// To seal in place, put the message at buf[16:] and pass buf[:0] as dst:
// the box then fills buf. Otherwise dst's new bytes must not overlap the
// message; any other overlap panics before anything is written.
func (b *Secretbox) Seal(dst []byte, nonce *[NonceSizeX]byte, message []byte) []byte {
	ret, out := sliceForAppend(dst, TagSize+len(message))
	tag, ct := out[:TagSize], out[TagSize:]
	if alias.InexactOverlap(ct, message) || alias.AnyOverlap(tag, message) {
		panic("aead: invalid buffer overlap")
	}

	var s salsacore.State
	b.init(&s, nonce)
	// As in the ChaCha AEADs: one kernel call for a short message where
	// the CPU has one; otherwise short messages use a stack buffer only
	// as large as they need, and longer ones go straight through the
	// kernel.
	if aeadcore.SealSecretbox(&s, b.rounds, ct, message, (*[TagSize]byte)(tag)) {
		return ret
	}
	switch n := len(message); {
	case n <= secretboxHeadBytes(2):
		var head [2 * blockSize]byte
		b.sealShort(&s, head[:], tag, ct, message)
	case n <= secretboxHeadBytes(8):
		var head [8 * blockSize]byte
		b.sealShort(&s, head[:], tag, ct, message)
	case n <= secretboxHeadBytes(headBlocks):
		var head [headSize]byte
		b.sealShort(&s, head[:], tag, ct, message)
	default:
		b.sealLong(&s, tag, ct, message)
	}
	return ret
}

// sealShort encrypts plaintext into ct and writes its tag, for a plaintext
// whose keystream fits in head after the Poly1305 key.
func (b *Secretbox) sealShort(s *salsacore.State, head, tag, ct, plaintext []byte) {
	b.startHead(s, head, len(plaintext))
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
func (b *Secretbox) sealLong(s *salsacore.State, tag, ct, plaintext []byte) {
	var head [headSize]byte
	first := secretboxHeadBytes(headBlocks)
	b.startHead(s, head[:], first)
	mac := newMAC((*[32]byte)(head[:32]))
	subtle.XORBytes(ct[:first], plaintext[:first], head[32:])
	// The bytes from the head join the first chunk's Write.
	for macked, off := 0, first; off < len(ct); {
		n := min(len(ct)-off, chunkSize)
		salsacore.XORKeyStream(s, b.rounds, ct[off:off+n], plaintext[off:off+n])
		mac.Write(ct[macked : off+n])
		macked, off = off+n, off+n
	}
	mac.Sum(tag[:0])
}

// Open authenticates box, tag || ciphertext, and if the tag is valid
// appends the message (len(box)-16 bytes) to dst and returns the extended
// slice. It returns [ErrOpen] if the box is not authentic or is shorter
// than a tag.
//
// Open computes the tag over the whole ciphertext and compares it (in
// constant time) before it decrypts: a failed Open writes nothing to dst.
//
// To open in place, pass box[16:16] as dst: the message then replaces the
// ciphertext, where Seal in place took it from. Otherwise dst's new bytes
// must not overlap the box; any other overlap panics before anything is
// written.
func (b *Secretbox) Open(dst []byte, nonce *[NonceSizeX]byte, box []byte) ([]byte, error) {
	if len(box) < TagSize {
		return nil, ErrOpen
	}
	tag, ct := (*[TagSize]byte)(box[:TagSize]), box[TagSize:]
	ret, out := sliceForAppend(dst, len(ct))
	if alias.InexactOverlap(out, ct) || alias.AnyOverlap(out, tag[:]) {
		panic("aead: invalid buffer overlap")
	}

	var s salsacore.State
	b.init(&s, nonce)
	ok, handled := aeadcore.OpenSecretbox(&s, b.rounds, out, ct, tag)
	if handled {
		if !ok {
			return nil, ErrOpen
		}
		return ret, nil
	}
	switch n := len(ct); {
	case n <= secretboxHeadBytes(2):
		var head [2 * blockSize]byte
		ok = b.openShort(&s, head[:], out, ct, tag)
	case n <= secretboxHeadBytes(8):
		var head [8 * blockSize]byte
		ok = b.openShort(&s, head[:], out, ct, tag)
	default:
		ok = b.openLong(&s, out, ct, tag)
	}
	if !ok {
		return nil, ErrOpen
	}
	return ret, nil
}

// openShort checks tag against ct and, only if it is valid, decrypts ct
// into out, for a ciphertext whose keystream fits in head after the
// Poly1305 key. It reports whether the tag was valid.
func (b *Secretbox) openShort(s *salsacore.State, head, out, ct []byte, tag *[TagSize]byte) bool {
	b.startHead(s, head, len(ct))
	var want [TagSize]byte
	sumMAC(&want, ct, (*[32]byte)(head[:32]))
	if !tagsEqual(&want, tag) {
		return false
	}
	subtle.XORBytes(out, ct, head[32:])
	return true
}

// openLong is openShort for longer ciphertexts, with the head of sealLong
// (block 0 and the keystream of the first message bytes in one kernel
// call): the whole ciphertext in one Poly1305 call, and only if the tag is
// valid the rest of it straight through the XOR-fused kernel in chunks.
func (b *Secretbox) openLong(s *salsacore.State, out, ct []byte, tag *[TagSize]byte) bool {
	var head [headSize]byte
	first := min(len(ct), secretboxHeadBytes(headBlocks))
	b.startHead(s, head[:], first)
	var want [TagSize]byte
	sumMAC(&want, ct, (*[32]byte)(head[:32]))
	if !tagsEqual(&want, tag) {
		return false
	}
	subtle.XORBytes(out[:first], ct[:first], head[32:])
	if first < len(ct) {
		// The tag is checked: no MAC pass to keep in step with, and the
		// core splits its own kernel calls.
		salsacore.XORKeyStream(s, b.rounds, out[first:], ct[first:])
	}
	return true
}
