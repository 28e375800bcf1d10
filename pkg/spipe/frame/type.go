package frame

import "strconv"

// Type is the kind of a frame: the last non-zero byte of its inner
// plaintext.
type Type uint8

// The frame types.
const (
	// Data carries stream bytes (possibly none).
	Data Type = 1
	// CloseWrite is the authenticated end of one direction (half-close):
	// the sender sends no frame after it. It carries no data.
	CloseWrite Type = 2
	// Keepalive proves the sender alive and is skipped by the reader. It
	// carries no data.
	Keepalive Type = 3
)

// String returns "data", "close-write", "keepalive" or "type(N)".
func (t Type) String() string {
	switch t {
	case Data:
		return "data"
	case CloseWrite:
		return "close-write"
	case Keepalive:
		return "keepalive"
	}
	return "type(" + strconv.Itoa(int(t)) + ")"
}

func (t Type) valid() bool { return t >= Data && t <= Keepalive }
