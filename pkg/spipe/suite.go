package spipe

import (
	"fmt"
	"strings"

	"github.com/spipe-dev/spipe/pkg/aead"
)

// Suite identifies a cipher suite of the pipe: the AEAD that seals frames.
// Its numeric value is the suite's bit in the handshake's suite mask, so it
// is stable and fits in 1..15.
type Suite uint8

// The suites. Reduced-round suites are faster with a smaller security margin;
// a connection uses one only if both configs list it.
const (
	// ChaCha20Poly1305 is RFC 8439 ChaCha20-Poly1305; the default.
	ChaCha20Poly1305 Suite = 1
	// XSalsa20Poly1305 is NaCl secretbox (XSalsa20-Poly1305). It takes no
	// additional data, so the frame header is bound into its nonce instead.
	XSalsa20Poly1305 Suite = 2
	// ChaCha12Poly1305 is the RFC 8439 construction over 12-round ChaCha.
	ChaCha12Poly1305 Suite = 3
	// ChaCha8Poly1305 is the RFC 8439 construction over 8-round ChaCha.
	ChaCha8Poly1305 Suite = 4
	// XSalsa12Poly1305 is the secretbox construction over XSalsa20/12.
	XSalsa12Poly1305 Suite = 5
)

// DefaultSuites is the suite list of a Config that sets none: full-strength
// suites only, ChaCha20-Poly1305 preferred.
var DefaultSuites = []Suite{ChaCha20Poly1305, XSalsa20Poly1305}

// AllSuites lists every suite, full-strength ones first.
var AllSuites = []Suite{ChaCha20Poly1305, XSalsa20Poly1305, ChaCha12Poly1305, ChaCha8Poly1305, XSalsa12Poly1305}

type suiteInfo struct {
	name  string
	alias []string
	aead  aead.Suite
	// headerInNonce: the AEAD takes no additional data, so the frame header
	// goes into the nonce (see docs/PROTOCOL.md).
	headerInNonce bool
}

var suites = map[Suite]suiteInfo{
	ChaCha20Poly1305: {"chacha20-poly1305", []string{"chacha20"}, aead.ChaCha20Poly1305, false},
	XSalsa20Poly1305: {"xsalsa20-poly1305", []string{"xsalsa20", "salsa20", "salsa20-poly1305"}, aead.XSalsa20Poly1305, true},
	ChaCha12Poly1305: {"chacha12-poly1305", []string{"chacha12"}, aead.ChaCha12Poly1305, false},
	ChaCha8Poly1305:  {"chacha8-poly1305", []string{"chacha8"}, aead.ChaCha8Poly1305, false},
	XSalsa12Poly1305: {"xsalsa12-poly1305", []string{"xsalsa12", "salsa12", "salsa2012"}, aead.XSalsa12Poly1305, true},
}

// String returns the suite's name as ParseSuite accepts it, e.g.
// "chacha20-poly1305".
func (s Suite) String() string {
	if info, ok := suites[s]; ok {
		return info.name
	}
	return fmt.Sprintf("suite(%d)", uint8(s))
}

// Valid reports whether s is a known suite.
func (s Suite) Valid() bool { _, ok := suites[s]; return ok }

// Reduced reports whether s uses fewer than 20 cipher rounds.
func (s Suite) Reduced() bool { return s.Valid() && suites[s].aead.Reduced() }

// AEAD returns the pkg/aead construction that seals this suite's frames.
func (s Suite) AEAD() aead.Suite { return suites[s].aead }

// ParseSuite returns the suite named name (case-insensitive; the String
// form or a short alias such as "chacha20", "xsalsa20", "chacha8").
func ParseSuite(name string) (Suite, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, s := range AllSuites {
		info := suites[s]
		if name == info.name {
			return s, nil
		}
		for _, a := range info.alias {
			if name == a {
				return s, nil
			}
		}
	}
	return 0, fmt.Errorf("spipe: unknown cipher suite %q", name)
}

// ParseSuites parses a comma-separated suite list, in preference order,
// e.g. "chacha20-poly1305,xsalsa20-poly1305". Duplicates are an error.
func ParseSuites(list string) ([]Suite, error) {
	var out []Suite
	var seen uint16
	for _, name := range strings.Split(list, ",") {
		s, err := ParseSuite(name)
		if err != nil {
			return nil, err
		}
		if seen&(1<<s) != 0 {
			return nil, fmt.Errorf("spipe: cipher suite %s listed twice", s)
		}
		seen |= 1 << s
		out = append(out, s)
	}
	return out, nil
}

func suiteMask(list []Suite) uint16 {
	var m uint16
	for _, s := range list {
		m |= 1 << s
	}
	return m
}
