package aead

import "strconv"

// Suite names one AEAD construction with its round count. The numeric values
// are stable across releases, so a Suite may be stored or sent as a byte.
type Suite uint8

// The suites. ChaCha20Poly1305, XChaCha20Poly1305 and XSalsa20Poly1305 are
// the standard constructions at full strength.
//
// ChaCha12Poly1305, ChaCha8Poly1305 and XSalsa12Poly1305 are the same
// constructions with fewer cipher rounds (12 or 8 instead of 20; XSalsa20/12
// also derives its subkey with 12-round HSalsa). They are faster but have a
// smaller security margin against future cryptanalysis of the cipher; no
// practical attack on them is known today. Choose them only deliberately.
const (
	ChaCha20Poly1305  Suite = 1 // RFC 8439, 12-byte nonce
	XChaCha20Poly1305 Suite = 2 // XChaCha20-Poly1305, 24-byte nonce
	XSalsa20Poly1305  Suite = 3 // NaCl secretbox, 24-byte nonce, no additional data
	ChaCha12Poly1305  Suite = 4 // RFC 8439 construction over ChaCha12 (reduced rounds)
	ChaCha8Poly1305   Suite = 5 // RFC 8439 construction over ChaCha8 (reduced rounds)
	XSalsa12Poly1305  Suite = 6 // secretbox construction over XSalsa20/12 (reduced rounds)
)

// Suites lists every suite, full-strength ones first.
func Suites() []Suite {
	return []Suite{ChaCha20Poly1305, XChaCha20Poly1305, XSalsa20Poly1305,
		ChaCha12Poly1305, ChaCha8Poly1305, XSalsa12Poly1305}
}

// String returns the suite's conventional name, e.g. "ChaCha20-Poly1305".
func (s Suite) String() string {
	switch s {
	case ChaCha20Poly1305:
		return "ChaCha20-Poly1305"
	case XChaCha20Poly1305:
		return "XChaCha20-Poly1305"
	case XSalsa20Poly1305:
		return "XSalsa20-Poly1305"
	case ChaCha12Poly1305:
		return "ChaCha12-Poly1305"
	case ChaCha8Poly1305:
		return "ChaCha8-Poly1305"
	case XSalsa12Poly1305:
		return "XSalsa20/12-Poly1305"
	}
	return "Suite(" + strconv.Itoa(int(s)) + ")"
}

// Valid reports whether s is one of the suites above.
func (s Suite) Valid() bool { return s.rounds() != 0 }

// Reduced reports whether s uses fewer than 20 cipher rounds.
func (s Suite) Reduced() bool { r := s.rounds(); return r != 0 && r < 20 }

// KeySize returns the key size in bytes (32 for every valid suite, 0 for an
// invalid one).
func (s Suite) KeySize() int {
	if !s.Valid() {
		return 0
	}
	return KeySize
}

// NonceSize returns the nonce size in bytes: 12 for the RFC 8439 suites, 24
// for the extended-nonce ones, 0 for an invalid suite.
func (s Suite) NonceSize() int {
	switch s {
	case ChaCha20Poly1305, ChaCha12Poly1305, ChaCha8Poly1305:
		return NonceSize
	case XChaCha20Poly1305, XSalsa20Poly1305, XSalsa12Poly1305:
		return NonceSizeX
	}
	return 0
}

// Overhead returns the number of bytes Seal adds (the tag), 0 for an invalid
// suite.
func (s Suite) Overhead() int {
	if !s.Valid() {
		return 0
	}
	return TagSize
}

// rounds is the cipher round count of s, or 0 if s is not a suite.
func (s Suite) rounds() int {
	switch s {
	case ChaCha20Poly1305, XChaCha20Poly1305, XSalsa20Poly1305:
		return 20
	case ChaCha12Poly1305, XSalsa12Poly1305:
		return 12
	case ChaCha8Poly1305:
		return 8
	}
	return 0
}
