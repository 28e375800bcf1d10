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

	var s chachacore.State
	a.init(&s, nonce)
	// Short messages take their keystream from one kernel call beside
	// block 0, in a stack buffer only as large as they need: Go zeroes it
	// on every call, and zeroing 1 KiB measured about 5% of a 64-byte Seal.
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
	a.init(&s, nonce)
	var ok bool
	// As in Seal, the stack buffer is only as large as the message needs.
	switch n := len(ct); {
	case n <= 1*blockSize:
		var head [2 * blockSize]byte
		ok = a.openShort(&s, head[:], out, ct, additionalData, &tag)
	case n <= 7*blockSize:
		var head [8 * blockSize]byte
		ok = a.openShort(&s, head[:], out, ct, additionalData, &tag)
	case n <= headSize-blockSize:
		var head [headSize]byte
		ok = a.openShort(&s, head[:], out, ct, additionalData, &tag)
	default:
		ok = a.openLong(&s, out, ct, additionalData, &tag)
	}
	if !ok {
		clear(out)
		return nil, ErrOpen
	}
	return ret, nil
}

// openShort decrypts ct into out, for a ciphertext whose keystream fits in
// head after block 0, and reports whether tag is valid. The MAC reads the
// ciphertext before it is decrypted: in place, decrypting overwrites it.
func (a *chachaAEAD) openShort(s *chachacore.State, head, out, ct, additionalData []byte, tag *[TagSize]byte) bool {
	a.startHead(s, head, len(ct))
	var want [TagSize]byte
	sumAEAD(&want, (*[32]byte)(head[:32]), additionalData, ct)
	subtle.XORBytes(out, ct, head[chachacore.BlockSize:])
	return tagsEqual(&want, tag)
}

// openLong is openShort for longer ciphertexts, which go straight through
// the kernel in chunks, each MACed before it is decrypted. The MAC needs
// block 0 first. Into a separate buffer, block 0 comes from the kernel call
// that also decrypts the first 16 message blocks, as in Seal. In place that
// call would overwrite ciphertext the MAC has yet to read, so block 0 comes
// alone: with the whole MAC input of a one-chunk message in one Poly1305
// call, that measured 10-14% faster at 1 KiB to 1.5 KiB than copying the
// first 16 blocks aside for the MAC (which then took two calls; paired in
// one process). Ciphertexts under 1 KiB go to openShort16.
func (a *chachaAEAD) openLong(s *chachacore.State, out, ct, additionalData []byte, tag *[TagSize]byte) bool {
	if len(ct) < headSize {
		return a.openShort16(s, out, ct, additionalData, tag)
	}
	first := min(len(ct)&^(blockSize-1), headSize)
	if alias.AnyOverlap(out, ct) {
		first = 0
	}
	return a.openChunks(s, out, ct, first, additionalData, tag)
}

// openChunks does openLong's work. The first bytes of ct (whole blocks,
// possibly none) are decrypted by the kernel call that computes block 0.
func (a *chachaAEAD) openChunks(s *chachacore.State, out, ct []byte, first int, additionalData []byte, tag *[TagSize]byte) bool {
	var key [blockSize]byte
	if first == 0 {
		a.startHead(s, key[:], 0)
	} else {
		chachacore.XORKeyStreamHead(s, a.rounds, &key, out[:first], ct[:first])
	}
	var want [TagSize]byte
	if len(ct) <= chunkSize {
		// One chunk: ct is intact (in place, first is 0), one MAC call.
		sumAEADLong(&want, (*[32]byte)(key[:32]), additionalData, ct)
		chachacore.XORKeyStream(s, a.rounds, out[first:], ct[first:])
		return tagsEqual(&want, tag)
	}
	mac := newMAC((*[32]byte)(key[:32]))
	writePadded(mac, additionalData)
	// Each chunk is MACed before it is decrypted (in place, decrypting
	// overwrites it); the last one with the end of the MAC input, so its
	// partial block is read before it is decrypted too.
	for src, dst := ct, out; ; {
		n := min(len(src), chunkSize)
		macked := src[:n]
		last := n == len(src)
		if last {
			mac.SumAEAD(&want, macked, len(additionalData), len(ct))
		} else {
			mac.Write(macked)
		}
		chachacore.XORKeyStream(s, a.rounds, dst[first:n], src[first:n])
		if last {
			break
		}
		first = 0
		src, dst = src[n:], dst[n:]
	}
	return tagsEqual(&want, tag)
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
