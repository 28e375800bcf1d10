package keyring

// A key file is hashed byte for byte, so any file that is not empty
// loads, as with spiped; but one recorded handshake lets an attacker test
// guesses of the file offline, so only files with 256 bits of entropy are
// keys. These checks catch the common mistakes (a passphrase, a
// hand-typed, constant or short file) without pretending to measure
// entropy.

// minDistinctBytes and minDistinctHex are the fewest distinct values that
// 32 random bytes, or 64 random hex digits, are all but certain to
// exceed (on average they show about 30 and 16).
const (
	minDistinctBytes = 16
	minDistinctHex   = 8
)

// minKeyBytes is the shortest material that can hold 256 bits of entropy.
const minKeyBytes = 32

// weakKeyReason says why material does not look like a key spipe keygen
// would write (64 hex digits and a newline) or 32 or more random bytes,
// or "" if it does.
func weakKeyReason(material []byte) string {
	if len(material) < minKeyBytes {
		return "it holds fewer than 32 bytes, too few for 256 bits of entropy"
	}
	text := trimNewline(material)
	if isHex(text) && len(text) >= 64 {
		if distinct(text) < minDistinctHex {
			return "its hex digits repeat too much to be random"
		}
		return ""
	}
	if isText(material) {
		return "it is text but not 64 hex digits (a passphrase is not a key)"
	}
	if distinct(material) < minDistinctBytes {
		return "its bytes repeat too much to be random"
	}
	return ""
}

func trimNewline(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}

func isHex(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return len(b) > 0
}

// isText reports whether b is printable ASCII and whitespace only.
func isText(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' || c > 0x7e {
			return false
		}
	}
	return true
}

func distinct(b []byte) int {
	var seen [256]bool
	n := 0
	for _, c := range b {
		if !seen[c] {
			seen[c] = true
			n++
		}
	}
	return n
}
