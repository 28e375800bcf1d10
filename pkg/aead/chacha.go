package aead

import (
	"crypto/subtle"
	"encoding/binary"

	"github.com/spipe-dev/spipe/internal/aeadcore"
	"github.com/spipe-dev/spipe/internal/chachacore"
)

// maxChaChaPlaintext is RFC 8439's limit: the 32-bit block counter gives the
// message blocks 1 to 2^32-1 (block 0 makes the Poly1305 key).
const maxChaChaPlaintext = (1<<32 - 1) * chachacore.BlockSize

// chachaAEAD is the RFC 8439 construction over ChaCha with any round count,
// and, when extended, XChaCha (HChaCha subkey, 24-byte nonce).
type chachaAEAD struct {
	key      [KeySize]byte
	keyState chachacore.State // constants and key words; init adds the nonce
	rounds   int
	extended bool
}

func newChaCha(key []byte, rounds int, extended bool) *chachaAEAD {
	a := &chachaAEAD{rounds: rounds, extended: extended}
	copy(a.key[:], key)
	chachacore.Init(&a.keyState, key, make([]byte, NonceSize))
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
		// The key's words were laid out once, in New.
		*s = a.keyState
		s[13] = binary.LittleEndian.Uint32(nonce[0:4])
		s[14] = binary.LittleEndian.Uint32(nonce[4:8])
		s[15] = binary.LittleEndian.Uint32(nonce[8:12])
		return
	}
	var subkey [32]byte
	chachacore.HChaCha(&subkey, &a.key, (*[16]byte)(nonce[:16]), a.rounds)
	var n [NonceSize]byte
	copy(n[4:], nonce[16:24])
	chachacore.Init(s, subkey[:], n[:])
}

// startHead generates, in one kernel call, keystream block 0 (the Poly1305
// key) and after it the keystream of the first msgLen message bytes into
// head, which must hold them rounded up to whole blocks. A SIMD kernel
// computes those blocks beside block 0: up to 16 in all as one group, and
// 16 message blocks with block 0 as the kernel's head block
// (chachacore.XORKeyStreamHead), not as a second group. s is left at the
// block after them.
func (a *chachaAEAD) startHead(s *chachacore.State, head []byte, msgLen int) {
	n := roundUpBlocks(chachacore.BlockSize + msgLen)
	if n <= headSize {
		chachacore.XORKeyStream(s, a.rounds, head[:n], head[:n])
		return
	}
	ks := head[chachacore.BlockSize:n]
	chachacore.XORKeyStreamHead(s, a.rounds, (*[chachacore.BlockSize]byte)(head), ks, ks)
}

// Seal encrypts and authenticates plaintext and additional data and appends
// ciphertext || tag to dst. It panics if the nonce has the wrong size, if
// plaintext exceeds RFC 8439's limit, or if dst's new bytes overlap plaintext
// other than exactly (in place: dst = plaintext[:0]) or overlap
// additionalData.
func (a *chachaAEAD) Seal(dst, nonce, plaintext, additionalData []byte) []byte {
	if len(nonce) != a.NonceSize() {
		panic("aead: wrong nonce size passed to Seal")
	}
	if uint64(len(plaintext)) > maxChaChaPlaintext {
		panic("aead: plaintext too large")
	}
	ret, out := sliceForAppend(dst, len(plaintext)+TagSize)
	checkOverlap(out, plaintext, additionalData)

	var s chachacore.State
	a.init(&s, nonce)
	// Short messages: one kernel call for the whole Seal, where the CPU
	// has one (internal/aeadcore).
	if aeadcore.SealChaCha(&s, a.rounds, out, plaintext, additionalData, (*[TagSize]byte)(out[len(plaintext):])) {
		return ret
	}
	// Otherwise short messages take their keystream from one kernel call
	// beside block 0, in a stack buffer only as large as they need: Go
	// zeroes it on every call, and zeroing 1 KiB measured about 5% of a
	// 64-byte Seal.
	switch n := len(plaintext); {
	case n <= 1*blockSize:
		var head [2 * blockSize]byte
		a.sealShort(&s, head[:], out, plaintext, additionalData)
	case n <= 7*blockSize:
		var head [8 * blockSize]byte
		a.sealShort(&s, head[:], out, plaintext, additionalData)
	case n <= headSize-blockSize:
		var head [headSize]byte
		a.sealShort(&s, head[:], out, plaintext, additionalData)
	default:
		a.sealLong(&s, out, plaintext, additionalData)
	}
	return ret
}

// sealShort writes ciphertext || tag to out for a plaintext whose keystream
// fits in head after block 0.
func (a *chachaAEAD) sealShort(s *chachacore.State, head, out, plaintext, additionalData []byte) {
	ct := out[:len(plaintext)]
	a.startHead(s, head, len(plaintext))
	subtle.XORBytes(ct, plaintext, head[chachacore.BlockSize:])
	sumAEAD((*[TagSize]byte)(out[len(ct):]), (*[32]byte)(head[:32]), additionalData, ct)
}

// sealLong writes ciphertext || tag to out for a longer plaintext. The
// message blocks go straight from plaintext through the kernel, which XORs
// as it goes (no keystream buffer, no separate XOR); block 0 comes from
// the same call as the first of them (chachacore.XORKeyStreamHead), so
// 1 KiB takes one kernel call. Plaintexts under 1 KiB go to sealShort16.
func (a *chachaAEAD) sealLong(s *chachacore.State, out, plaintext, additionalData []byte) {
	if len(plaintext) < headSize {
		a.sealShort16(s, out, plaintext, additionalData)
		return
	}
	ct := out[:len(plaintext)]
	// Encrypt a chunk, then MAC it while it is still in cache; the last
	// chunk goes to the MAC with the end of its input (padded last block,
	// lengths) in one kernel call.
	// The first call takes up to 16 message blocks beside block 0;
	// chachacore.XORKeyStream the rest, whose partial last block it joins
	// to the full blocks before it.
	tag := (*[TagSize]byte)(out[len(ct):])
	n := min(len(plaintext), chunkSize)
	first := min(n&^(blockSize-1), headSize)
	var key [blockSize]byte
	chachacore.XORKeyStreamHead(s, a.rounds, &key, ct[:first], plaintext[:first])
	chachacore.XORKeyStream(s, a.rounds, ct[first:n], plaintext[first:n])
	if n == len(ct) {
		sumAEADLong(tag, (*[32]byte)(key[:32]), additionalData, ct)
		return
	}
	mac := newMAC((*[32]byte)(key[:32]))
	writePadded(mac, additionalData)
	mac.Write(ct[:n])
	for src, dst := plaintext[n:], ct[n:]; ; {
		n := min(len(src), chunkSize)
		chachacore.XORKeyStream(s, a.rounds, dst[:n], src[:n])
		if n == len(src) {
			mac.SumAEAD(tag, dst, len(additionalData), len(ct))
			return
		}
		mac.Write(dst[:n])
		src, dst = src[n:], dst[n:]
	}
}

// Open authenticates ciphertext || tag and additional data and, if the tag
// is valid, appends the plaintext to dst. It returns ErrOpen if they are
// not authentic, and panics if the nonce has the wrong size or dst's new
// bytes overlap the ciphertext (tag included) other than exactly (in
// place: dst = ciphertext[:0]) or overlap additionalData.
//
// Open computes the tag over the whole ciphertext and compares it (in
// constant time) before it decrypts: a failed Open writes nothing to dst.
func (a *chachaAEAD) Open(dst, nonce, ciphertext, additionalData []byte) ([]byte, error) {
	if len(nonce) != a.NonceSize() {
		panic("aead: wrong nonce size passed to Open")
	}
	if len(ciphertext) < TagSize || uint64(len(ciphertext)) > maxChaChaPlaintext+TagSize {
		return nil, ErrOpen
	}
	ct := ciphertext[:len(ciphertext)-TagSize]
	tag := (*[TagSize]byte)(ciphertext[len(ct):])
	ret, out := sliceForAppend(dst, len(ct))
	checkOverlap(out, ciphertext, additionalData)

	var s chachacore.State
	a.init(&s, nonce)
	ok, handled := aeadcore.OpenChaCha(&s, a.rounds, out, ct, additionalData, tag)
	if handled {
		if !ok {
			return nil, ErrOpen
		}
		return ret, nil
	}
	// As in Seal, the stack buffer is only as large as the message needs.
	switch n := len(ct); {
	case n <= 1*blockSize:
		var head [2 * blockSize]byte
		ok = a.openShort(&s, head[:], out, ct, additionalData, tag)
	case n <= 7*blockSize:
		var head [8 * blockSize]byte
		ok = a.openShort(&s, head[:], out, ct, additionalData, tag)
	case n <= headSize-blockSize:
		var head [headSize]byte
		ok = a.openShort(&s, head[:], out, ct, additionalData, tag)
	default:
		ok = a.openLong(&s, out, ct, additionalData, tag)
	}
	if !ok {
		return nil, ErrOpen
	}
	return ret, nil
}

// openShort checks tag against ct and additional data and, only if it is
// valid, decrypts ct into out, for a ciphertext whose keystream fits in
// head after block 0. It reports whether the tag was valid.
func (a *chachaAEAD) openShort(s *chachacore.State, head, out, ct, additionalData []byte, tag *[TagSize]byte) bool {
	a.startHead(s, head, len(ct))
	var want [TagSize]byte
	sumAEAD(&want, (*[32]byte)(head[:32]), additionalData, ct)
	if !tagsEqual(&want, tag) {
		return false
	}
	subtle.XORBytes(out, ct, head[chachacore.BlockSize:])
	return true
}

// openLong is openShort for longer ciphertexts: the whole MAC input in
// one Poly1305 call and, only if the tag is valid, the ciphertext straight
// through the XOR-fused kernel in chunks. Ciphertexts under 1 KiB go to
// openShort16.
//
// The MAC needs block 0 first, and a lone block is a kernel call of
// latency-bound rounds (about 90 ns, a fifth of a 1 KiB Open). Where the
// kernel computes it for nearly nothing beside a 16-block group
// (chachacore.HeadFused: AVX-512), openHead takes the first 16 blocks that
// way when they would otherwise make a 16-block group of their own; a
// message of whole 32-block groups goes through them faster, with block 0
// alone. Measured paired in one process against each other and against
// the decrypt-then-verify Open this replaced (see openHead).
func (a *chachaAEAD) openLong(s *chachacore.State, out, ct, additionalData []byte, tag *[TagSize]byte) bool {
	if len(ct) < headSize {
		return a.openShort16(s, out, ct, additionalData, tag)
	}
	if blocks := roundUpBlocks(len(ct)) / blockSize; blocks%32 >= 16 && chachacore.HeadFused() {
		return a.openHead(s, out, ct, additionalData, tag)
	}
	var key [blockSize]byte
	a.startHead(s, key[:], 0)
	var want [TagSize]byte
	sumAEADLong(&want, (*[32]byte)(key[:32]), additionalData, ct)
	if !tagsEqual(&want, tag) {
		return false
	}
	a.decryptRest(s, out, ct)
	return true
}

// openHead is openLong for a ciphertext of at least 1 KiB with block 0
// from the kernel call that also decrypts the first 16 blocks — into a
// stack buffer, not into out: they reach out only once the tag over the
// whole ciphertext is valid (a failed Open clears the buffer). Go zeroes
// that buffer on every call and the copy costs a little more, so at 1 KiB
// this Open measured 11-13% slower than the decrypt-then-verify one it
// replaced, which decrypted those blocks straight into out, and 4-5%
// faster in place, where that one took block 0 alone (old and new paired
// in one process, alternating slices, AVX-512). With block 0 alone it was
// 13-15% slower out of place; with a scratch buffer on the heap, which
// Go need not zero, 4% (and 8% with the clearing it would need so as not
// to keep plaintext), but one shared by concurrent calls needs a lock.
func (a *chachaAEAD) openHead(s *chachacore.State, out, ct, additionalData []byte, tag *[TagSize]byte) bool {
	var key [blockSize]byte
	var pt [headSize]byte
	chachacore.XORKeyStreamHead(s, a.rounds, &key, pt[:], ct[:headSize])
	var want [TagSize]byte
	sumAEADLong(&want, (*[32]byte)(key[:32]), additionalData, ct)
	if !tagsEqual(&want, tag) {
		clear(pt[:])
		return false
	}
	copy(out, pt[:])
	a.decryptRest(s, out[headSize:], ct[headSize:])
	return true
}

// decryptRest XORs the keystream from the block counter in s into out,
// from ct, once the tag is checked: there is no MAC pass to keep in step
// with, so the whole rest is one core call (the core splits its own
// kernel calls).
func (a *chachaAEAD) decryptRest(s *chachacore.State, out, ct []byte) {
	if len(ct) > 0 {
		chachacore.XORKeyStream(s, a.rounds, out, ct)
	}
}

// shortMACSize bounds the MAC input (padded additional data, padded
// ciphertext and the length block) that sumShort gathers on the stack,
// so that a short message costs one Poly1305 kernel call instead of one
// per piece.
const shortMACSize = 192

// sumShort writes to tag the RFC 8439 tag of additional data ad and
// ciphertext ct, whose MAC input — ad, zero padding, ct, zero padding, the
// length block — fits in shortMACSize bytes: gathered on the stack, it
// costs one Poly1305 kernel call instead of one per piece.
func sumShort(tag *[TagSize]byte, key *[32]byte, ad, ct []byte) {
	var b [shortMACSize]byte
	adPad := roundUp16(len(ad))
	copy(b[:], ad)
	n := adPad + copy(b[adPad:], ct)
	n = roundUp16(n)
	binary.LittleEndian.PutUint64(b[n:], uint64(len(ad)))
	binary.LittleEndian.PutUint64(b[n+8:], uint64(len(ct)))
	sumMAC(tag, b[:n+16], key)
}

// roundUp16 rounds n up to a multiple of 16, the Poly1305 block size.
func roundUp16(n int) int { return (n + 16 - 1) &^ (16 - 1) }

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

// sealShort16 and openShort16 handle 16 message blocks, the last one
// partial (961..1023 bytes): block 0 comes beside them in one kernel call,
// into a stack buffer as for shorter messages, where sealLong and openLong
// would give the partial block a kernel call of its own. (A whole 1 KiB in
// place measured faster on the long path.) The buffer lives in these
// functions so that it does not enlarge Seal's and Open's frames, and
// sealLong and openLong route to them so that Seal and Open stay as small.
func (a *chachaAEAD) sealShort16(s *chachacore.State, out, plaintext, additionalData []byte) {
	var head [headSize + blockSize]byte
	a.sealShort(s, head[:], out, plaintext, additionalData)
}

func (a *chachaAEAD) openShort16(s *chachacore.State, out, ct, additionalData []byte, tag *[TagSize]byte) bool {
	var head [headSize + blockSize]byte
	return a.openShort(s, head[:], out, ct, additionalData, tag)
}
