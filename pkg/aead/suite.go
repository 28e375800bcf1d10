package aead

import (
	"errors"
	"strconv"
	"strings"
)

// Suite names one construction of this package with its round count. It
// is the one suite type of the module: the values are stable across
// releases, and from protocol 2 on they are also the suite identifiers of
// the spipe wire protocol, so a Suite may be stored or sent as a byte.
type Suite uint8

// The suites. ChaCha20Poly1305, XChaCha20Poly1305 and XSalsa20Poly1305 are
// the standard constructions at full strength.
//
// ChaCha12Poly1305, ChaCha8Poly1305 and XSalsa12Poly1305 are the same
// constructions with fewer cipher rounds (12 or 8 instead of 20; XSalsa20/12
// also derives its subkey with 12-round HSalsa). They are faster but have a
// smaller security margin against future cryptanalysis of the cipher; no
// practical attack on them is known today. Choose them only deliberately.
//
// The two secretbox suites are NaCl's crypto_secretbox construction, which
// has no additional data and puts the tag first; they are reached through
// [NewSecretbox], the others through [New].
const (
	ChaCha20Poly1305  Suite = 1 // RFC 8439, 12-byte nonce
	XChaCha20Poly1305 Suite = 2 // XChaCha20-Poly1305, 24-byte nonce
	XSalsa20Poly1305  Suite = 3 // NaCl secretbox construction: NewSecretbox, not New
	ChaCha12Poly1305  Suite = 4 // RFC 8439 construction over ChaCha12 (reduced rounds)
	ChaCha8Poly1305   Suite = 5 // RFC 8439 construction over ChaCha8 (reduced rounds)
	XSalsa12Poly1305  Suite = 6 // secretbox over XSalsa20/12 (HSalsa also 12 rounds)
)

// suiteInfo is what this package knows of a suite beyond its number.
type suiteInfo struct {
	name      string   // canonical, lower case: String and ParseSuite
	aliases   []string // short names ParseSuite also accepts
	rounds    int      // cipher rounds (and HChaCha/HSalsa rounds)
	nonceSize int
	secretbox bool
}

// suiteTable is indexed by Suite; entry 0 is no suite. The order of
// allSuites, not of this table, is the order of Suites.
var suiteTable = [...]suiteInfo{
	ChaCha20Poly1305:  {"chacha20-poly1305", []string{"chacha20"}, 20, NonceSize, false},
	XChaCha20Poly1305: {"xchacha20-poly1305", []string{"xchacha20"}, 20, NonceSizeX, false},
	XSalsa20Poly1305:  {"xsalsa20-poly1305", []string{"xsalsa20", "salsa20", "salsa20-poly1305", "secretbox"}, 20, NonceSizeX, true},
	ChaCha12Poly1305:  {"chacha12-poly1305", []string{"chacha12"}, 12, NonceSize, false},
	ChaCha8Poly1305:   {"chacha8-poly1305", []string{"chacha8"}, 8, NonceSize, false},
	XSalsa12Poly1305:  {"xsalsa12-poly1305", []string{"xsalsa12", "salsa12", "salsa2012"}, 12, NonceSizeX, true},
}

// allSuites is every suite, full-strength ones first.
var allSuites = [...]Suite{ChaCha20Poly1305, XChaCha20Poly1305, XSalsa20Poly1305,
	ChaCha12Poly1305, ChaCha8Poly1305, XSalsa12Poly1305}

// Suites returns every suite, the full-strength ones first, in a fresh
// slice the caller may change.
func Suites() []Suite { return append([]Suite(nil), allSuites[:]...) }

// info returns the table entry of s, or nil if s is not a suite.
func (s Suite) info() *suiteInfo {
	if int(s) < len(suiteTable) && suiteTable[s].rounds != 0 {
		return &suiteTable[s]
	}
	return nil
}

// ParseSuite returns the suite named name: its String form or a short
// alias such as "chacha20", "xchacha20", "xsalsa20" or "chacha8", in any
// case, with surrounding spaces ignored. The error for any other name
// lists every valid one.
func ParseSuite(name string) (Suite, error) {
	want := strings.ToLower(strings.TrimSpace(name))
	var valid []string
	for _, s := range allSuites {
		info := s.info()
		if want == info.name {
			return s, nil
		}
		for _, a := range info.aliases {
			if want == a {
				return s, nil
			}
		}
		valid = append(valid, info.name+" ("+strings.Join(info.aliases, ", ")+")")
	}
	return 0, errors.New("aead: unknown suite " + strconv.Quote(name) +
		"; valid names (aliases in parentheses): " + strings.Join(valid, "; "))
}

// String returns the suite's canonical name, which ParseSuite accepts:
// "chacha20-poly1305", "xchacha20-poly1305", "xsalsa20-poly1305",
// "chacha12-poly1305", "chacha8-poly1305" or "xsalsa12-poly1305". Any
// other value gives "Suite(n)".
func (s Suite) String() string {
	if info := s.info(); info != nil {
		return info.name
	}
	return "Suite(" + strconv.Itoa(int(s)) + ")"
}

// Valid reports whether s is one of the suites above.
func (s Suite) Valid() bool { return s.info() != nil }

// Reduced reports whether s uses fewer than 20 cipher rounds (false for
// an invalid suite).
func (s Suite) Reduced() bool { return s.rounds() != 0 && s.rounds() < 20 }

// NonceSize returns the suite's nonce size in bytes: [NonceSize] (12) for
// the RFC 8439 suites, [NonceSizeX] (24) for XChaCha20-Poly1305 and the
// secretbox suites, 0 for an invalid suite.
func (s Suite) NonceSize() int {
	if info := s.info(); info != nil {
		return info.nonceSize
	}
	return 0
}

// Secretbox reports whether s is one of the two NaCl secretbox suites
// (XSalsa20Poly1305, XSalsa12Poly1305), which [NewSecretbox] makes and
// [New] refuses.
func (s Suite) Secretbox() bool {
	info := s.info()
	return info != nil && info.secretbox
}

// rounds is the cipher round count of s, or 0 if s is not a suite.
func (s Suite) rounds() int {
	if info := s.info(); info != nil {
		return info.rounds
	}
	return 0
}
