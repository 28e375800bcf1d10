// Package refcrypto is a second, deliberately plain implementation of the
// constructions the spipe protocol seals frames with, for tests that must
// not trust this module's own code: ChaCha and Salsa20 with any round
// count written from their specifications (word by word, no tables, no
// SIMD), HChaCha and HSalsa, and the two AEAD layouts over them (RFC 8439
// and NaCl's secretbox) with golang.org/x/crypto's Poly1305. It is checked
// against x/crypto at 20 rounds and against the external reduced-round
// vectors under testdata/vectors. Imported only by _test.go files.
package refcrypto

import (
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"math/bits"

	//lint:ignore SA1019 the reference constructions assemble their AEADs from x/crypto's Poly1305; test-only.
	"golang.org/x/crypto/poly1305"
)

func le(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

// sigma and tau are the constants of 32- and 16-byte keys: "expand
// 32-byte k" and "expand 16-byte k".
var (
	sigma = [4]uint32{0x61707865, 0x3320646e, 0x79622d32, 0x6b206574}
	tau   = [4]uint32{0x61707865, 0x3120646e, 0x79622d36, 0x6b206574}
)

// keyHalves returns the constants of a 16- or 32-byte key and its two
// 16-byte halves (the same half twice for a 16-byte key).
func keyHalves(key []byte) (c [4]uint32, k1, k2 []byte) {
	if len(key) == 16 {
		return tau, key, key
	}
	return sigma, key[:16], key[16:32]
}

// chachaState is the ChaCha input block: the constants, the key, then 16
// bytes of counter and nonce.
func chachaState(key []byte, tail *[16]byte) [16]uint32 {
	c, k1, k2 := keyHalves(key)
	var s [16]uint32
	copy(s[:4], c[:])
	for i := range 4 {
		s[4+i] = le(k1[4*i:])
		s[8+i] = le(k2[4*i:])
	}
	for i := range 4 {
		s[12+i] = le(tail[4*i:])
	}
	return s
}

func chachaRounds(x *[16]uint32, rounds int) {
	qr := func(a, b, c, d int) {
		x[a] += x[b]
		x[d] = bits.RotateLeft32(x[d]^x[a], 16)
		x[c] += x[d]
		x[b] = bits.RotateLeft32(x[b]^x[c], 12)
		x[a] += x[b]
		x[d] = bits.RotateLeft32(x[d]^x[a], 8)
		x[c] += x[d]
		x[b] = bits.RotateLeft32(x[b]^x[c], 7)
	}
	for i := 0; i < rounds; i += 2 {
		qr(0, 4, 8, 12)
		qr(1, 5, 9, 13)
		qr(2, 6, 10, 14)
		qr(3, 7, 11, 15)
		qr(0, 5, 10, 15)
		qr(1, 6, 11, 12)
		qr(2, 7, 8, 13)
		qr(3, 4, 9, 14)
	}
}

// ChaChaBlock is ChaCha's block function with rounds rounds: the input
// block (a 16- or 32-byte key, and 16 bytes of counter || nonce as the
// layout in use puts them) run through the rounds and added back.
func ChaChaBlock(key []byte, tail *[16]byte, rounds int) [64]byte {
	in := chachaState(key, tail)
	x := in
	chachaRounds(&x, rounds)
	var out [64]byte
	for i := range x {
		binary.LittleEndian.PutUint32(out[4*i:], x[i]+in[i])
	}
	return out
}

// HChaCha is HChaCha with rounds rounds: words 0..3 and 12..15 of the
// permuted (not added) block.
func HChaCha(key *[32]byte, input *[16]byte, rounds int) [32]byte {
	x := chachaState(key[:], input)
	chachaRounds(&x, rounds)
	var out [32]byte
	for i, w := range []uint32{x[0], x[1], x[2], x[3], x[12], x[13], x[14], x[15]} {
		binary.LittleEndian.PutUint32(out[4*i:], w)
	}
	return out
}

// ChaChaIETF XORs the RFC 8439 key stream (32-bit block counter from
// counter, 12-byte nonce) with rounds rounds into a copy of src.
func ChaChaIETF(key *[32]byte, nonce []byte, counter uint32, rounds int, src []byte) []byte {
	out := make([]byte, len(src))
	for off := 0; off < len(src); off += 64 {
		var tail [16]byte
		binary.LittleEndian.PutUint32(tail[:], counter)
		copy(tail[4:], nonce)
		ks := ChaChaBlock(key[:], &tail, rounds)
		subtle.XORBytes(out[off:], src[off:], ks[:])
		counter++
	}
	return out
}

// salsaState is the Salsa20 input block for a 16- or 32-byte key and 16
// bytes of nonce || counter.
func salsaState(key []byte, in *[16]byte) [16]uint32 {
	c, k1, k2 := keyHalves(key)
	var s [16]uint32
	s[0], s[5], s[10], s[15] = c[0], c[1], c[2], c[3]
	for i := range 4 {
		s[1+i] = le(k1[4*i:])
		s[11+i] = le(k2[4*i:])
		s[6+i] = le(in[4*i:])
	}
	return s
}

func salsaRounds(x *[16]uint32, rounds int) {
	qr := func(a, b, c, d int) {
		x[b] ^= bits.RotateLeft32(x[a]+x[d], 7)
		x[c] ^= bits.RotateLeft32(x[b]+x[a], 9)
		x[d] ^= bits.RotateLeft32(x[c]+x[b], 13)
		x[a] ^= bits.RotateLeft32(x[d]+x[c], 18)
	}
	for i := 0; i < rounds; i += 2 {
		qr(0, 4, 8, 12) // columns
		qr(5, 9, 13, 1)
		qr(10, 14, 2, 6)
		qr(15, 3, 7, 11)
		qr(0, 1, 2, 3) // rows
		qr(5, 6, 7, 4)
		qr(10, 11, 8, 9)
		qr(15, 12, 13, 14)
	}
}

// SalsaBlock is the Salsa20 expansion with rounds rounds of a 16- or
// 32-byte key and 16 bytes of nonce || little-endian block counter.
func SalsaBlock(key []byte, in *[16]byte, rounds int) [64]byte {
	s := salsaState(key, in)
	x := s
	salsaRounds(&x, rounds)
	var out [64]byte
	for i := range x {
		binary.LittleEndian.PutUint32(out[4*i:], x[i]+s[i])
	}
	return out
}

// HSalsa is HSalsa with rounds rounds: words 0, 5, 10, 15, 6, 7, 8, 9 of
// the permuted block.
func HSalsa(key *[32]byte, input *[16]byte, rounds int) [32]byte {
	x := salsaState(key[:], input)
	salsaRounds(&x, rounds)
	var out [32]byte
	for i, w := range []uint32{x[0], x[5], x[10], x[15], x[6], x[7], x[8], x[9]} {
		binary.LittleEndian.PutUint32(out[4*i:], w)
	}
	return out
}

// XSalsa returns the first n bytes of the XSalsa20 key stream (with
// rounds rounds, HSalsa included) of key and a 24-byte nonce.
func XSalsa(key *[32]byte, nonce *[24]byte, rounds, n int) []byte {
	sub := HSalsa(key, (*[16]byte)(nonce[:16]), rounds)
	out := make([]byte, 0, n+64)
	for ctr := uint64(0); len(out) < n; ctr++ {
		var in [16]byte
		copy(in[:8], nonce[16:])
		binary.LittleEndian.PutUint64(in[8:], ctr)
		b := SalsaBlock(sub[:], &in, rounds)
		out = append(out, b[:]...)
	}
	return out[:n]
}

var errOpen = errors.New("refcrypto: message authentication failed")

// pad16 is the zero padding RFC 8439 puts after a MAC input part.
func pad16(n int) []byte { return make([]byte, (16-n%16)%16) }

// rfc8439 XORs src with the RFC 8439 key stream from block 1 and returns
// the result with the tag of ad and the ciphertext (ct is the result when
// sealing, src when opening). A 24-byte nonce means XChaCha: the HChaCha
// subkey of its first 16 bytes, its last 8 as the nonce's last 8.
func rfc8439(key *[32]byte, nonce []byte, rounds int, src, ad []byte, sealing bool) (out []byte, tag [16]byte) {
	k, n := *key, nonce
	if len(nonce) == 24 {
		k = HChaCha(key, (*[16]byte)(nonce[:16]), rounds)
		n = append(make([]byte, 4), nonce[16:]...)
	}
	var tail [16]byte
	copy(tail[4:], n)
	block0 := ChaChaBlock(k[:], &tail, rounds)
	out = ChaChaIETF(&k, n, 1, rounds, src)
	ct := out
	if !sealing {
		ct = src
	}
	var macIn []byte
	macIn = append(append(macIn, ad...), pad16(len(ad))...)
	macIn = append(append(macIn, ct...), pad16(len(ct))...)
	macIn = binary.LittleEndian.AppendUint64(macIn, uint64(len(ad)))
	macIn = binary.LittleEndian.AppendUint64(macIn, uint64(len(ct)))
	poly1305.Sum(&tag, macIn, (*[32]byte)(block0[:32]))
	return out, tag
}

// SealRFC8439 is the RFC 8439 AEAD over ChaCha with rounds rounds and a
// 12-byte nonce, or over XChaCha (HChaCha with rounds rounds too) with a
// 24-byte nonce: ciphertext || tag.
func SealRFC8439(key *[32]byte, nonce []byte, rounds int, plaintext, ad []byte) []byte {
	ct, tag := rfc8439(key, nonce, rounds, plaintext, ad, true)
	return append(ct, tag[:]...)
}

// OpenRFC8439 reverses SealRFC8439.
func OpenRFC8439(key *[32]byte, nonce []byte, rounds int, sealed, ad []byte) ([]byte, error) {
	if len(sealed) < 16 {
		return nil, errOpen
	}
	pt, tag := rfc8439(key, nonce, rounds, sealed[:len(sealed)-16], ad, false)
	if subtle.ConstantTimeCompare(tag[:], sealed[len(sealed)-16:]) != 1 {
		return nil, errOpen
	}
	return pt, nil
}

// SealSecretbox is NaCl's crypto_secretbox over XSalsa20 with rounds
// rounds: the Poly1305 key is the first 32 key stream bytes, the message
// is encrypted from byte 32 on, and the box is tag || ciphertext.
func SealSecretbox(key *[32]byte, nonce *[24]byte, rounds int, message []byte) []byte {
	ks := XSalsa(key, nonce, rounds, 32+len(message))
	ct := make([]byte, len(message))
	subtle.XORBytes(ct, message, ks[32:])
	var tag [16]byte
	poly1305.Sum(&tag, ct, (*[32]byte)(ks[:32]))
	return append(tag[:], ct...)
}

// OpenSecretbox reverses SealSecretbox.
func OpenSecretbox(key *[32]byte, nonce *[24]byte, rounds int, box []byte) ([]byte, error) {
	if len(box) < 16 {
		return nil, errOpen
	}
	ks := XSalsa(key, nonce, rounds, 32+len(box)-16)
	var tag [16]byte
	poly1305.Sum(&tag, box[16:], (*[32]byte)(ks[:32]))
	if subtle.ConstantTimeCompare(tag[:], box[:16]) != 1 {
		return nil, errOpen
	}
	pt := make([]byte, len(box)-16)
	subtle.XORBytes(pt, box[16:], ks[32:])
	return pt, nil
}
