// Package aeadcore seals and opens short messages of pkg/aead's
// constructions in one kernel call each: ChaCha-Poly1305 as RFC 8439
// defines it (any round count) and NaCl's secretbox (XSalsa20-Poly1305
// after the caller's HSalsa subkey). A kernel computes block 0 — the
// Poly1305 key — beside the message's key stream blocks, XORs them in and
// computes Poly1305 over the additional data, the ciphertext and the
// lengths (in general registers, or from 193 bytes on, 481 for secretbox,
// in AVX-512 IFMA vector lanes), with no call or copy between the steps:
// at these sizes the steps' latencies and the calls between them, not the
// work, are what a message costs.
//
// The functions take the cipher state (from chachacore.Init or
// salsacore.Init, block counter 0) and report whether a kernel handled
// the message: only AVX-512 CPUs have the kernels, and only messages of
// at most [MaxChaCha] or [MaxSecretbox] bytes take them (ChaCha-Poly1305
// messages over 256 bytes, and secretbox messages over 480, only where
// the CPU has AVX-512 IFMA and VBMI2); the caller does everything else its
// own way.
//
// Open compares the tag in constant time and writes the plaintext to dst
// only if it is valid; a failed Open leaves dst untouched. dst may be src
// itself (in place) but must not otherwise overlap it, the additional data
// or the tag; the caller checks that. No branch or memory address depends
// on the key, the message or the tag, but for the verdict itself; the last
// partial 64-byte piece of a message is read and written with masked
// instructions, which touch no byte past the message.
package aeadcore

// The longest messages the kernels take, in bytes.
const (
	MaxChaCha    = 1024
	MaxSecretbox = 1056
)

// SealChaCha writes the ciphertext of src (len(dst) >= len(src)) and the
// tag of it and ad under the ChaCha state s (key, nonce, counter 0) with
// rounds rounds (a multiple of 4, as for the cores: pkg/aead passes 8, 12
// or 20), if a kernel takes the message; it reports whether one did, and
// if not writes nothing.
func SealChaCha(s *[16]uint32, rounds int, dst, src, ad []byte, tag *[16]byte) bool {
	if len(src) > MaxChaCha || len(dst) < len(src) {
		return false
	}
	return sealChaCha(s, rounds, dst, src, ad, tag)
}

// OpenChaCha checks tag against the ciphertext src and ad and, if it is
// valid, writes the plaintext to dst (len(dst) >= len(src)), if a kernel
// takes the message: handled reports whether one did (if not, nothing is
// checked or written), ok whether the tag was valid.
func OpenChaCha(s *[16]uint32, rounds int, dst, src, ad []byte, tag *[16]byte) (ok, handled bool) {
	if len(src) > MaxChaCha || len(dst) < len(src) {
		return false, false
	}
	return openChaCha(s, rounds, dst, src, ad, tag)
}

// SealSecretbox is [SealChaCha] for secretbox under the Salsa20 state s
// (the HSalsa subkey, the nonce's last 8 bytes, counter 0): no additional
// data, and the tag covers the ciphertext alone.
func SealSecretbox(s *[16]uint32, rounds int, dst, src []byte, tag *[16]byte) bool {
	if len(src) > MaxSecretbox || len(dst) < len(src) {
		return false
	}
	return sealSecretbox(s, rounds, dst, src, tag)
}

// OpenSecretbox is [OpenChaCha] for secretbox.
func OpenSecretbox(s *[16]uint32, rounds int, dst, src []byte, tag *[16]byte) (ok, handled bool) {
	if len(src) > MaxSecretbox || len(dst) < len(src) {
		return false, false
	}
	return openSecretbox(s, rounds, dst, src, tag)
}
