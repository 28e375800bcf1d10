package frame

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/aead"
)

var (
	testLengths = []int{0, 1, 15, 16, 17, 63, 64, 65, 255, 1000, 4095, 4096, 65535}
	testPads    = []int{0, 1, 16, 256, 4096}
)

func TestSealOpenRoundTrip(t *testing.T) {
	for _, suite := range frameSuites {
		t.Run(suite.String(), func(t *testing.T) {
			f, _ := newTestCipher(t, suite)
			for _, n := range testLengths {
				for _, pad := range testPads {
					data := bytes.Repeat([]byte{0xa5, 0}, n/2+1)[:n] // ends in zeros half the time
					counter := uint64(n*7 + pad)
					frame := f.Seal(nil, counter, Data, data, pad)
					require.Len(t, frame, Overhead+PayloadSize(n, pad), "n=%d pad=%d", n, pad)
					size, err := Size(frame)
					require.NoError(t, err)
					require.Equal(t, len(frame), size)

					// Into a separate buffer, appending after a prefix.
					prefix := []byte("prefix")
					typ, got, err := f.Open(append([]byte(nil), prefix...), frame, counter)
					require.NoError(t, err, "n=%d pad=%d", n, pad)
					assert.Equal(t, Data, typ)
					assert.Equal(t, append(append([]byte(nil), prefix...), data...), got)

					// In place.
					off := f.DataOffset()
					typ, got, err = f.Open(frame[off:off], frame, counter)
					require.NoError(t, err)
					assert.Equal(t, Data, typ)
					assert.True(t, bytes.Equal(data, got), "n=%d pad=%d: in-place data differs", n, pad)
					if n > 0 {
						assert.Same(t, &frame[off], &got[0], "in place, the data is where it was sealed")
					}
				}
			}
			for _, typ := range []Type{CloseWrite, Keepalive} {
				for _, pad := range testPads {
					frame := f.Seal(nil, 3, typ, nil, pad)
					got, data, err := f.Open(nil, frame, 3)
					require.NoError(t, err)
					assert.Equal(t, typ, got)
					assert.Empty(t, data)
				}
			}
		})
	}
}

// TestSealInPlace: data read straight into the frame's data area is sealed
// where it lies, and the frame equals one sealed from a separate copy.
func TestSealInPlace(t *testing.T) {
	for _, suite := range frameSuites {
		for _, pad := range []int{0, 64} {
			f, _ := newTestCipher(t, suite)
			data := []byte("data staged where the frame's data goes")
			want := f.Seal(nil, 9, Data, data, pad)

			buf := make([]byte, 2, 4096)
			area := buf[:cap(buf)][len(buf)+f.DataOffset():][:len(data)]
			copy(area, data)
			got := f.Seal(buf, 9, Data, area, pad)
			assert.Equal(t, want, got[2:], "%s pad %d", suite, pad)
		}
	}
}

// TestPaddedTypesLookAlike: with padding, a short data frame, the end of
// the stream and a keepalive have the same size on the wire.
func TestPaddedTypesLookAlike(t *testing.T) {
	for _, suite := range frameSuites {
		f, _ := newTestCipher(t, suite)
		const pad = 256
		want := Overhead + pad
		for n := 0; n < pad; n++ {
			require.Len(t, f.Seal(nil, 0, Data, make([]byte, n), pad), want, "data frame of %d bytes", n)
		}
		assert.Len(t, f.Seal(nil, 0, CloseWrite, nil, pad), want)
		assert.Len(t, f.Seal(nil, 0, Keepalive, nil, pad), want)
		assert.Len(t, f.Seal(nil, 0, Data, make([]byte, pad), pad), Overhead+2*pad, "one byte over a pad unit takes two")
	}
}

func TestTamperedFrames(t *testing.T) {
	for _, suite := range frameSuites {
		t.Run(suite.String(), func(t *testing.T) {
			f, key := newTestCipher(t, suite)
			frame := f.Seal(nil, 5, Data, []byte("authentic frame"), 0)
			for i := range frame {
				for bit := range 8 {
					bad := append([]byte(nil), frame...)
					bad[i] ^= 1 << bit
					_, data, err := f.Open(nil, bad, 5)
					assert.Nil(t, data)
					if i < HeaderSize {
						// A changed length no longer matches the frame's
						// size, or announces more than a frame can hold.
						assert.True(t, isAny(err, ErrTampered, ErrTruncated, ErrTooLarge), "byte %d bit %d: %v", i, bit, err)
						continue
					}
					assert.ErrorIs(t, err, ErrTampered, "byte %d bit %d", i, bit)
				}
			}
			for _, counter := range []uint64{4, 6, 5 | 1<<32, MaxCounter} {
				_, _, err := f.Open(nil, frame, counter)
				assert.ErrorIs(t, err, ErrTampered, "counter %d", counter)
			}
			_, _, err := f.Open(nil, frame, MaxCounter+1)
			assert.ErrorIs(t, err, ErrTampered)
			_, _, err = f.Open(nil, frame[:len(frame)-1], 5)
			assert.ErrorIs(t, err, ErrTruncated)
			_, _, err = f.Open(nil, append(frame, 0), 5)
			assert.ErrorIs(t, err, ErrTampered)

			// The same key under another suite, and another key.
			for _, other := range frameSuites {
				if other == suite {
					continue
				}
				g, err := NewCipher(other, key)
				require.NoError(t, err)
				_, _, err = g.Open(nil, frame, 5)
				assert.ErrorIs(t, err, ErrTampered, "opened as %s", other)
			}
			g, _ := newTestCipher(t, suite)
			_, _, err = g.Open(nil, frame, 5)
			assert.ErrorIs(t, err, ErrTampered)
		})
	}
}

func isAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

// TestMalformedInner: authentic frames whose inner plaintext breaks the
// format are ErrMalformed, never data.
func TestMalformedInner(t *testing.T) {
	cases := map[string][]byte{
		"empty":                  {},
		"all zeros":              make([]byte, 64),
		"unknown type 12":        {'x', 12},
		"unknown type 0x81":      {0x81, 0, 0},
		"close-write with data":  {'x', byte(CloseWrite)},
		"keepalive with data":    {0, 'x', 0, byte(Keepalive), 0, 0},
		"close-write with zeros": {0, byte(CloseWrite)},
		"open without its id":    {0, 0, 1, byte(StreamOpen)},
		"stream data, no id":     {byte(StreamData)},
		"end with data":          {'x', 0, 0, 0, 1, byte(StreamEnd)},
		"reset short of code":    {0, 0, 0, 1, byte(StreamReset)},
		"credit with data":       {'x', 0, 0, 0, 1, 0, 0, 1, 0, byte(StreamCredit)},
		"go-away, one byte more": {0, 0, 0, 0, 0, 0, byte(GoAway)},
		"ping of 7 bytes":        {1, 2, 3, 4, 5, 6, 7, byte(Ping)},
		"pong of 9 bytes":        {1, 2, 3, 4, 5, 6, 7, 8, 9, byte(Pong)},
	}
	for _, suite := range frameSuites {
		f, _ := newTestCipher(t, suite)
		for name, inner := range cases {
			frame := sealInner(f, 1, inner)
			typ, data, err := f.Open(nil, frame, 1)
			assert.ErrorIs(t, err, ErrMalformed, "%s: %s", suite, name)
			assert.Zero(t, typ)
			assert.Nil(t, data)
		}
		// Padding is whatever zeros follow the type: any amount is fine.
		frame := sealInner(f, 1, []byte{'h', 'i', 0, byte(Data), 0, 0, 0, 0, 0})
		typ, data, err := f.Open(nil, frame, 1)
		require.NoError(t, err)
		assert.Equal(t, Data, typ)
		assert.Equal(t, []byte{'h', 'i', 0}, data)
		// Fields may end in zero bytes too: the type byte closes them.
		frame = sealInner(f, 2, []byte{'h', 'i', 0, 0, 0, 0, byte(StreamData), 0, 0})
		typ, data, err = f.Open(nil, frame, 2)
		require.NoError(t, err)
		assert.Equal(t, StreamData, typ)
		assert.Equal(t, []byte{'h', 'i', 0, 0, 0, 0}, data, "data, then a stream id of 0 (the stream layer's to refuse)")
	}
}

// TestTypeLayouts: every type's fields and whether it carries data, as
// docs/PROTOCOL.md section 4 tabulates them, and what Seal accepts.
func TestTypeLayouts(t *testing.T) {
	want := []struct {
		t      Type
		name   string
		fields int
		data   bool
	}{
		{Data, "data", 0, true}, {CloseWrite, "close-write", 0, false}, {Keepalive, "keepalive", 0, false},
		{StreamOpen, "open", 4, true}, {StreamData, "stream data", 4, true}, {StreamEnd, "end", 4, false},
		{StreamReset, "reset", 5, false}, {StreamCredit, "credit", 8, false}, {GoAway, "go-away", 5, false},
		{Ping, "ping", 8, false}, {Pong, "pong", 8, false},
	}
	f, _ := newTestCipher(t, frameSuites[0])
	for i, w := range want {
		assert.Equal(t, Type(i+1), w.t, "types are numbered 1 to 11 in the table's order")
		assert.Equal(t, w.name, w.t.String())
		assert.Equal(t, w.fields, w.t.FieldSize(), w.name)
		assert.Equal(t, w.data, w.t.CarriesData(), w.name)
		body := make([]byte, w.fields)
		frame := f.Seal(nil, uint64(i), w.t, body, 0)
		typ, got, err := f.Open(nil, frame, uint64(i))
		require.NoError(t, err, w.name)
		assert.Equal(t, w.t, typ)
		assert.Len(t, got, w.fields)
		if w.data {
			frame = f.Seal(nil, uint64(i), w.t, append([]byte("data"), body...), 0)
			_, got, err = f.Open(nil, frame, uint64(i))
			require.NoError(t, err, w.name)
			assert.Equal(t, append([]byte("data"), body...), got)
		} else {
			assert.Panics(t, func() { f.Seal(nil, 0, w.t, make([]byte, w.fields+1), 0) }, "%s with data", w.name)
		}
		if w.fields > 0 {
			assert.Panics(t, func() { f.Seal(nil, 0, w.t, make([]byte, w.fields-1), 0) }, "%s short of its fields", w.name)
		}
	}
	for _, unknown := range []Type{0, 12, 255} {
		assert.Zero(t, unknown.FieldSize())
		assert.False(t, unknown.CarriesData())
		assert.Equal(t, fmt.Sprintf("type(%d)", uint8(unknown)), unknown.String())
	}
}

func TestSize(t *testing.T) {
	n, err := Size([]byte{0, 0, 1})
	require.NoError(t, err)
	assert.Equal(t, HeaderSize+1+TagSize, n)
	n, err = Size([]byte{0x10, 0, 0, 0xff})
	require.NoError(t, err)
	assert.Equal(t, HeaderSize+MaxPayload+TagSize, n)
	_, err = Size([]byte{0x10, 0, 1})
	assert.ErrorIs(t, err, ErrTooLarge)
	_, err = Size([]byte{0xff, 0xff, 0xff})
	assert.ErrorIs(t, err, ErrTooLarge)
	_, err = Size([]byte{0, 1})
	assert.ErrorIs(t, err, ErrTruncated)
}

func TestPayloadSize(t *testing.T) {
	for _, c := range []struct{ data, pad, want int }{
		{0, 0, 1}, {10, 0, 11}, {0, 16, 16}, {15, 16, 16}, {16, 16, 32}, {65535, 0, 65536}, {4095, 4096, 4096},
	} {
		assert.Equal(t, c.want, PayloadSize(c.data, c.pad), "%+v", c)
	}
}

func TestSealPanics(t *testing.T) {
	f, _ := newTestCipher(t, aead.ChaCha20Poly1305)
	assert.Panics(t, func() { f.Seal(nil, 0, 0, nil, 0) }, "type 0")
	assert.Panics(t, func() { f.Seal(nil, 0, 4, nil, 0) }, "type 4")
	assert.Panics(t, func() { f.Seal(nil, 0, CloseWrite, []byte{1}, 0) })
	assert.Panics(t, func() { f.Seal(nil, 0, Keepalive, []byte{1}, 0) })
	assert.Panics(t, func() { f.Seal(nil, MaxCounter+1, Data, nil, 0) })
	assert.Panics(t, func() { f.Seal(nil, 0, Data, make([]byte, MaxPayload), 0) }, "data plus type over MaxPayload")
	assert.NotPanics(t, func() { f.Seal(nil, MaxCounter, Data, make([]byte, MaxPayload-1), 0) })
	buf := make([]byte, 0, 4096)
	data := buf[:100][5:50] // overlaps the frame, not where its data goes
	assert.Panics(t, func() { f.Seal(buf, 0, Data, data, 0) })
}

func TestNewCipherErrors(t *testing.T) {
	_, err := NewCipher(0, make([]byte, 32))
	assert.Error(t, err)
	_, err = NewCipher(aead.Suite(99), make([]byte, 32))
	assert.Error(t, err)
	_, err = NewCipher(aead.ChaCha20Poly1305, make([]byte, 16))
	assert.Error(t, err)
}

func TestNoAllocations(t *testing.T) {
	for _, suite := range frameSuites {
		f, _ := newTestCipher(t, suite)
		data := make([]byte, 16<<10)
		buf := make([]byte, 0, len(data)+Overhead+64)
		out := make([]byte, 0, len(data)+64)
		var frame []byte
		allocs := testing.AllocsPerRun(20, func() {
			frame = f.Seal(buf, 1, Data, data, 64)
		})
		assert.Zero(t, allocs, "%s Seal", suite)
		allocs = testing.AllocsPerRun(20, func() {
			if _, _, err := f.Open(out, frame, 1); err != nil {
				panic(err)
			}
		})
		assert.Zero(t, allocs, "%s Open", suite)
	}
}
