package mux

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil/spec"
	"github.com/spipe-dev/spipe/pkg/spipe"
	"github.com/spipe-dev/spipe/pkg/spipe/frame"
)

// specCases are stream frames as docs/PROTOCOL.md 7.1 lays them out,
// encoded by the independent implementation (internal/testutil/spec),
// with what the parser must make of them.
var specCases = []struct {
	name   string
	data   string
	fields map[string]uint64
	want   streamFrame
}{
	{"open", "first bytes", map[string]uint64{"stream_id": 1}, streamFrame{typ: frame.StreamOpen, id: 1, data: []byte("first bytes")}},
	{"open", "", map[string]uint64{"stream_id": 7}, streamFrame{typ: frame.StreamOpen, id: 7}},
	{"stream data", "ends in zeros\x00\x00", map[string]uint64{"stream_id": 0x01020304}, streamFrame{typ: frame.StreamData, id: 0x01020304, data: []byte("ends in zeros\x00\x00")}},
	{"stream data", "", map[string]uint64{"stream_id": 1<<32 - 1}, streamFrame{typ: frame.StreamData, id: 1<<32 - 1}},
	{"end", "", map[string]uint64{"stream_id": 256}, streamFrame{typ: frame.StreamEnd, id: 256}},
	{"reset", "", map[string]uint64{"stream_id": 3, "code": 1}, streamFrame{typ: frame.StreamReset, id: 3, code: 1}},
	{"reset", "", map[string]uint64{"stream_id": 3, "code": 0xee}, streamFrame{typ: frame.StreamReset, id: 3, code: 0xee}},
	{"credit", "", map[string]uint64{"stream_id": 9, "increment": 1<<32 - 1}, streamFrame{typ: frame.StreamCredit, id: 9, incr: 1<<32 - 1}},
	{"go-away", "", map[string]uint64{"last_stream_id": 0, "code": 0}, streamFrame{typ: frame.GoAway}},
	{"go-away", "", map[string]uint64{"last_stream_id": 42, "code": 1}, streamFrame{typ: frame.GoAway, id: 42, code: 1}},
	{"ping", "", map[string]uint64{"opaque": 0x0102030405060708}, streamFrame{typ: frame.Ping, opaque: 0x0102030405060708}},
	{"pong", "", map[string]uint64{"opaque": 0}, streamFrame{typ: frame.Pong}},
}

// TestParseFollowsTheSpec: every kind of stream frame, encoded from the
// specification by the independent implementation, parses to its fields;
// and the fields this package writes are byte for byte the ones the
// specification's encoding gives.
func TestParseFollowsTheSpec(t *testing.T) {
	for _, c := range specCases {
		body := spec.Body(c.name, []byte(c.data), c.fields)
		typ := frame.Type(spec.Types[c.name])
		got, err := parseFrame(typ, body)
		require.NoError(t, err, "%s %v", c.name, c.fields)
		if len(c.want.data) == 0 {
			assert.Empty(t, got.data, c.name)
			got.data = nil
		}
		assert.Equal(t, c.want, got, "%s %v", c.name, c.fields)

		f := c.want
		out := make([]byte, typ.FieldSize())
		n := putFields(out, &f)
		assert.Equal(t, typ.FieldSize(), n, c.name)
		assert.Equal(t, body[len(body)-n:], out, "%s: the fields written", c.name)
	}
}

// TestParseCharges: an open or stream data frame costs its data and 64;
// nothing else costs anything (docs/PROTOCOL.md 7.3).
func TestParseCharges(t *testing.T) {
	for _, c := range specCases {
		f := c.want
		want := uint64(0)
		if f.typ == frame.StreamOpen || f.typ == frame.StreamData {
			want = uint64(len(f.data)) + 64
		}
		assert.Equal(t, want, f.charge(), c.name)
	}
}

// TestParseRejects: what the parser refuses without knowing the session:
// a stream frame for stream 0 is a protocol error (docs/PROTOCOL.md 7.6),
// a credit of nothing is not (7.3: it is ignored); a body that does not fit its type, or a type
// that is not the stream layer's, is a malformed frame.
func TestParseRejects(t *testing.T) {
	protocol := map[string][]byte{
		"open of stream 0":   spec.Body("open", []byte("x"), map[string]uint64{"stream_id": 0}),
		"data on stream 0":   spec.Body("stream data", nil, map[string]uint64{"stream_id": 0}),
		"end of stream 0":    spec.Body("end", nil, nil),
		"reset of stream 0":  spec.Body("reset", nil, map[string]uint64{"code": 1}),
		"credit to stream 0": spec.Body("credit", nil, map[string]uint64{"increment": 5}),
	}
	names := map[string]string{
		"open of stream 0": "open", "data on stream 0": "stream data", "end of stream 0": "end",
		"reset of stream 0": "reset", "credit to stream 0": "credit",
	}
	for name, body := range protocol {
		_, err := parseFrame(frame.Type(spec.Types[names[name]]), body)
		assert.ErrorIs(t, err, ErrProtocol, name)
	}
	f, err := parseFrame(frame.StreamCredit, spec.Body("credit", nil, map[string]uint64{"stream_id": 5}))
	require.NoError(t, err, "a credit of nothing is well-formed")
	assert.Equal(t, streamFrame{typ: frame.StreamCredit, id: 5}, f)
	malformed := []struct {
		typ  frame.Type
		body []byte
	}{
		{frame.Data, []byte("x")},
		{frame.CloseWrite, nil},
		{frame.Keepalive, nil},
		{12, make([]byte, 8)},
		{frame.StreamOpen, []byte{0, 0, 1}},
		{frame.StreamEnd, []byte{'x', 0, 0, 0, 1}},
		{frame.Ping, make([]byte, 9)},
		{frame.GoAway, make([]byte, 4)},
	}
	for _, m := range malformed {
		_, err := parseFrame(m.typ, m.body)
		assert.ErrorIs(t, err, spipe.ErrMalformedFrame, "%s with %d bytes", m.typ, len(m.body))
	}
}

// FuzzParseFrame: the stream layer's parser never panics on any type and
// body; whatever it accepts has the type's fields, its data is the body
// before them, and writing its fields back gives the body's fields.
func FuzzParseFrame(f *testing.F) {
	for _, c := range specCases {
		f.Add(spec.Types[c.name], spec.Body(c.name, []byte(c.data), c.fields))
	}
	f.Add(byte(frame.StreamCredit), make([]byte, 8))
	f.Add(byte(0), []byte{})
	f.Fuzz(func(t *testing.T, typ byte, body []byte) {
		got, err := parseFrame(frame.Type(typ), body)
		if err != nil {
			return
		}
		n := got.typ.FieldSize()
		if got.typ != frame.Type(typ) || !isStreamType(got.typ) || len(body) < n {
			t.Fatalf("accepted %s with a body of %d bytes", got.typ, len(body))
		}
		if !bytes.Equal(got.data, body[:len(body)-n]) && (len(got.data) > 0 || len(body) > n) {
			t.Fatalf("data %x is not the body before its fields (%x)", got.data, body)
		}
		out := make([]byte, n)
		putFields(out, &got)
		if !bytes.Equal(out, body[len(body)-n:]) {
			t.Fatalf("fields %x written back as %x", body[len(body)-n:], out)
		}
	})
}
