package main

import (
	"strings"

	"github.com/spipe-dev/spipe/pkg/spipe"
)

// The --cipher names come from the protocol package, so its help, its
// error and the handshake agree on one set of names.

// suiteNames lists every suite --cipher accepts, full-strength first.
func suiteNames() string { return joinSuites(spipe.AllSuites, ", ") }

// defaultSuites is the list a connection offers without --cipher.
func defaultSuites() string { return joinSuites(spipe.DefaultSuites, ",") }

func joinSuites(list []spipe.Suite, sep string) string {
	names := make([]string, len(list))
	for i, s := range list {
		names[i] = s.String()
	}
	return strings.Join(names, sep)
}

// parseCipher parses --cipher; its error lists the valid names.
func parseCipher(list string) ([]spipe.Suite, error) {
	suites, err := spipe.ParseSuites(list)
	if err != nil {
		return nil, usagef("--cipher: %v; valid suites: %s", err, suiteNames())
	}
	return suites, nil
}
