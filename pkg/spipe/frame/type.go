package frame

import "strconv"

// Type is the kind of a frame: the last non-zero byte of its inner
// plaintext. Before the type byte comes the frame's body: its data, if
// the type carries any, then the type's fields, FieldSize bytes that the
// layer above parses (docs/PROTOCOL.md sections 4 and 7.1).
type Type uint8

// The frame types of mode 1 (one byte stream).
const (
	// Data carries stream bytes (possibly none).
	Data Type = 1
	// CloseWrite is the authenticated end of one direction (half-close):
	// the sender sends no frame after it. It carries no data. In mode 3
	// it is the carrier's own end.
	CloseWrite Type = 2
	// Keepalive proves the sender alive and is skipped by the reader. It
	// carries no data.
	Keepalive Type = 3
)

// The frame types of mode 3, the multiplexed mode (docs/PROTOCOL.md
// section 7.1): the stream layer's frames. Each has fields, parsed by
// package [github.com/spipe-dev/spipe/pkg/spipe/mux].
const (
	// StreamOpen opens a stream: a 4-byte stream id, after the stream's
	// first data (possibly none).
	StreamOpen Type = 4
	// StreamData carries a stream's bytes (possibly none), then its
	// 4-byte id.
	StreamData Type = 5
	// StreamEnd ends the sender's direction of a stream: its 4-byte id.
	StreamEnd Type = 6
	// StreamReset aborts a stream: its 4-byte id and a 1-byte code.
	StreamReset Type = 7
	// StreamCredit grants a stream's sender more window: its 4-byte id
	// and a 4-byte increment.
	StreamCredit Type = 8
	// GoAway says the sender takes or opens no new streams: the last
	// stream id (4 bytes) and a 1-byte code.
	GoAway Type = 9
	// Ping asks for a Pong with the same 8 opaque bytes.
	Ping Type = 10
	// Pong answers a Ping with its 8 bytes.
	Pong Type = 11
)

// layouts gives each type's field size and whether data may precede the
// fields; the zero layout marks an unknown type.
var layouts = [...]struct {
	known, data bool
	fields      int
}{
	Data:         {true, true, 0},
	CloseWrite:   {true, false, 0},
	Keepalive:    {true, false, 0},
	StreamOpen:   {true, true, 4},
	StreamData:   {true, true, 4},
	StreamEnd:    {true, false, 4},
	StreamReset:  {true, false, 5},
	StreamCredit: {true, false, 8},
	GoAway:       {true, false, 5},
	Ping:         {true, false, 8},
	Pong:         {true, false, 8},
}

var names = [...]string{
	Data: "data", CloseWrite: "close-write", Keepalive: "keepalive",
	StreamOpen: "open", StreamData: "stream data", StreamEnd: "end", StreamReset: "reset",
	StreamCredit: "credit", GoAway: "go-away", Ping: "ping", Pong: "pong",
}

// String returns the type's name as docs/PROTOCOL.md writes it ("data",
// "close-write", "stream data", "go-away", ...) or "type(N)".
func (t Type) String() string {
	if t.valid() {
		return names[t]
	}
	return "type(" + strconv.Itoa(int(t)) + ")"
}

// FieldSize is the number of bytes of fields at the end of a frame body
// of type t: 0 for the mode-1 types, 4 to 8 for the stream layer's.
// Unknown types have none.
func (t Type) FieldSize() int {
	if !t.valid() {
		return 0
	}
	return layouts[t].fields
}

// CarriesData reports whether a frame of type t may carry data before its
// fields (Data, StreamOpen and StreamData).
func (t Type) CarriesData() bool { return t.valid() && layouts[t].data }

func (t Type) valid() bool { return int(t) < len(layouts) && layouts[t].known }

// bodyFits reports whether a body of n bytes fits type t: its fields, and
// data only if the type carries data.
func (t Type) bodyFits(n int) bool {
	l := layouts[t]
	return n == l.fields || l.data && n > l.fields
}
