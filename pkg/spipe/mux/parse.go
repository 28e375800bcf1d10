package mux

import (
	"encoding/binary"
	"fmt"

	"github.com/spipe-dev/spipe/pkg/spipe"
	"github.com/spipe-dev/spipe/pkg/spipe/frame"
)

// The stream layer's fixed numbers (docs/PROTOCOL.md section 7).
const (
	// frameCharge is what an open or stream data frame costs against its
	// stream's window beyond its data bytes (7.3).
	frameCharge = 64
	// maxStreamID is the last stream id a client may open (7.2).
	maxStreamID = 1<<32 - 1
	// windowTotalLimit bounds a direction's initial window plus all its
	// credit increments (7.3).
	windowTotalLimit = 1 << 62
	// idFields is the size of a stream id at the end of a frame body, and
	// what an open or stream data frame's body holds beyond its data.
	idFields = 4
)

// Reset and go-away codes (7.1). A code this end does not know is taken
// as the first of its kind.
const (
	resetAborted = 0 // the sender abandoned the stream
	resetRefused = 1 // the server did nothing for it: safe to open again

	goAwayNoError       = 0
	goAwayProtocolError = 1
	goAwayInternalError = 2
)

// streamFrame is one stream-layer frame, parsed (docs/PROTOCOL.md 7.1).
type streamFrame struct {
	typ    frame.Type
	id     uint32 // the stream's id; a go-away's last stream id
	data   []byte // an open's or stream data frame's data: aliases the body
	code   byte   // a reset's or go-away's code
	incr   uint32 // a credit's increment
	opaque uint64 // a ping's or pong's bytes
}

// charge is what the frame costs its stream's window: its data and the
// fixed per-frame charge, for open and stream data frames; nothing for the
// others.
func (f *streamFrame) charge() uint64 {
	if f.typ == frame.StreamOpen || f.typ == frame.StreamData {
		return uint64(len(f.data)) + frameCharge
	}
	return 0
}

// isStreamType reports whether t is one of the stream layer's types.
func isStreamType(t frame.Type) bool { return t >= frame.StreamOpen && t <= frame.Pong }

// parseFrame splits an authenticated frame's body (data, then fields)
// into the frame it is, and checks what can be checked without the
// session's state: a stream frame names a stream (id 0 is none; a
// go-away's last stream id may be 0). A credit of 0 is well-formed: the
// stream ignores it (7.3). Everything that depends on the session (which
// ids are open, windows, who may open) is the session's to check. The
// returned data aliases body.
func parseFrame(t frame.Type, body []byte) (streamFrame, error) {
	f := streamFrame{typ: t}
	if !isStreamType(t) {
		return f, fmt.Errorf("%w: %s frame in the multiplexed mode", spipe.ErrMalformedFrame, t)
	}
	n := t.FieldSize()
	if len(body) < n || !t.CarriesData() && len(body) != n {
		return f, fmt.Errorf("%w: %s frame with a body of %d bytes", spipe.ErrMalformedFrame, t, len(body))
	}
	fields := body[len(body)-n:]
	switch t {
	case frame.Ping, frame.Pong:
		f.opaque = binary.BigEndian.Uint64(fields)
		return f, nil
	case frame.StreamOpen, frame.StreamData:
		f.data = body[:len(body)-n]
	case frame.StreamReset, frame.GoAway:
		f.code = fields[4]
	case frame.StreamCredit:
		f.incr = binary.BigEndian.Uint32(fields[4:])
	}
	f.id = binary.BigEndian.Uint32(fields)
	if f.id == 0 && t != frame.GoAway {
		return f, fmt.Errorf("%w: %s frame for stream 0", ErrProtocol, t)
	}
	return f, nil
}

// putFields writes the fields of f (not its data) into b, which holds at
// least f.typ.FieldSize() bytes, and returns how many it wrote.
func putFields(b []byte, f *streamFrame) int {
	switch f.typ {
	case frame.Ping, frame.Pong:
		binary.BigEndian.PutUint64(b, f.opaque)
		return 8
	case frame.StreamReset, frame.GoAway:
		binary.BigEndian.PutUint32(b, f.id)
		b[4] = f.code
		return 5
	case frame.StreamCredit:
		binary.BigEndian.PutUint32(b, f.id)
		binary.BigEndian.PutUint32(b[4:], f.incr)
		return 8
	}
	binary.BigEndian.PutUint32(b, f.id)
	return idFields
}
