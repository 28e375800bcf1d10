package main

import (
	"slices"
	"strings"

	"github.com/spipe-dev/spipe/pkg/aead"
	"github.com/spipe-dev/spipe/pkg/spipe"
)

// The --cipher names are pkg/aead's suite names, the ones the protocol
// negotiates and spipe bench prints, so the help, the error and the
// handshake agree on one set of names.

// suiteNames lists every suite --cipher accepts, full-strength first.
func suiteNames() string { return joinSuites(aead.Suites(), ", ") }

// defaultSuites is the list a connection offers without --cipher.
func defaultSuites() string { return joinSuites(spipe.DefaultSuites(), ",") }

func joinSuites(list []aead.Suite, sep string) string {
	names := make([]string, len(list))
	for i, s := range list {
		names[i] = s.String()
	}
	return strings.Join(names, sep)
}

// parseCipher parses --cipher, a comma-separated list in preference order;
// its error lists the valid names (aead.ParseSuite's does).
func parseCipher(list string) ([]aead.Suite, error) {
	var out []aead.Suite
	for _, name := range strings.Split(list, ",") {
		s, err := aead.ParseSuite(name)
		if err != nil {
			return nil, usagef("--cipher: %s", strings.TrimPrefix(err.Error(), "aead: "))
		}
		if slices.Contains(out, s) {
			return nil, usagef("--cipher: %s listed twice", s)
		}
		out = append(out, s)
	}
	return out, nil
}
