package mux

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/spec"
	"github.com/spipe-dev/spipe/pkg/spipe"
)

// A key holder that writes stream frames by hand (internal/testutil/spec,
// built from docs/PROTOCOL.md alone) against a real server session.

var keyholderFile = []byte("0123456789abcdef0123456789abcdef\n")

// keyholderServer runs a server session over one end of a loopback TCP
// connection and the independent key holder over the other, with the
// handshake done. The
// server's frames are drained in the background unless the test reads
// them itself (drain false).
func keyholderServer(t testing.TB, cfg *Config, drain bool) (*spec.Peer, *Session) {
	t.Helper()
	a, b := testutil.TCPPair(t)
	key, err := spipe.NewKey(keyholderFile)
	require.NoError(t, err)
	type res struct {
		s   *Session
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := Server(spipe.Server(b, &spipe.Config{Keys: []*spipe.Key{key}, Multiplex: true, MaxPayload: spipe.MaxPayloadLimit}), cfg)
		ch <- res{s, err}
	}()
	p, err := spec.Dial(a, keyholderFile, "", 3, 0)
	require.NoError(t, err)
	r := <-ch
	require.NoError(t, r.err)
	t.Cleanup(func() { a.Close(); r.s.Close() })
	if drain {
		go io.Copy(io.Discard, a)
	}
	return p, r.s
}

// id is a stream frame's stream id field.
func id(n uint64) map[string]uint64 { return map[string]uint64{"stream_id": n} }

// FuzzServerSession: a server session fed any sequence of stream frames
// by a key holder never panics, never holds more than its streams'
// windows, and either lives on or ends with a protocol or frame error;
// every stream it hands to Accept carries what the key holder sent it.
// The input is a run of frames: a type byte (taken modulo the stream
// types), a stream id byte, a code byte, a length byte and that many data
// bytes.
func FuzzServerSession(f *testing.F) {
	f.Add([]byte{0, 1, 0, 3, 'a', 'b', 'c', 2, 1, 0, 0})
	f.Add([]byte{0, 1, 0, 0, 0, 2, 0, 0, 3, 1, 1, 0})
	f.Add([]byte{0, 2, 0, 1, 'x'})
	f.Add([]byte{4, 1, 0, 0, 6, 0, 0, 0, 5, 0, 0, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		p, srv := keyholderServer(t, &Config{KeepAlive: -1, MaxStreams: 4}, true)
		types := []string{"open", "stream data", "end", "reset", "credit", "go-away", "ping", "pong"}
		var wire []byte
		sent := map[uint64][]byte{}
		for len(in) >= 4 {
			typ := types[int(in[0])%len(types)]
			sid, code, n := uint64(in[1]), uint64(in[2]), int(in[3])
			in = in[4:]
			n = min(n, len(in))
			data := in[:n]
			in = in[n:]
			fields := map[string]uint64{"stream_id": sid, "code": code, "increment": code << 12,
				"last_stream_id": sid, "opaque": code}
			if typ != "open" && typ != "stream data" {
				data = nil
			}
			if len(data) > 0 {
				sent[sid] = append(sent[sid], data...)
			}
			wire = append(wire, p.Frame(typ, data, fields)...)
		}
		wire = append(wire, p.Frame("close-write", nil, nil)...)
		go p.Conn.Write(wire)
		for {
			c, err := srv.Accept()
			if err != nil {
				break
			}
			st := c.(*Stream)
			got := make(chan []byte, 1)
			go func() { b, _ := io.ReadAll(st); got <- b }()
			var b []byte
			select {
			case b = <-got:
			case <-time.After(5 * time.Second):
				st.Reset()
				b = <-got
			}
			if want := sent[uint64(st.id)]; len(b) > len(want) || string(b) != string(want[:len(b)]) {
				t.Fatalf("stream %d delivered %q; the key holder sent %q", st.id, b, want)
			}
		}
		<-srv.Done()
		if err := srv.Err(); err != nil && !errors.Is(err, ErrProtocol) && !errors.Is(err, spipe.ErrMalformedFrame) &&
			!errors.Is(err, io.ErrClosedPipe) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, spipe.ErrTruncated) {
			t.Fatalf("the session ended with %v", err)
		}
	})
}

// readUntil reads the server's frames until one of type typ (section 4's
// name) arrives, and returns its body; it fails on anything else that
// ends the carrier first.
func readUntil(t *testing.T, p *spec.Peer, typ string) []byte {
	t.Helper()
	require.NoError(t, p.Conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	for {
		got, body, err := p.Read()
		require.NoError(t, err, "waiting for a %s frame", typ)
		if got == spec.Types[typ] {
			return body
		}
	}
}

// TestSmallFramesAreCharged: 1-byte frames cost 65 bytes of window each
// (docs/PROTOCOL.md 7.3), so a key holder packing them into a stream whose
// reader never reads gets 4,032 in (262,144 / 65), which the stream holds
// as 4,032 bytes, in a buffer of the smallest size; the 4,033rd overruns
// the window, a protocol error that ends the session and is named to the
// key holder in a go-away.
func TestSmallFramesAreCharged(t *testing.T) {
	p, srv := keyholderServer(t, &Config{KeepAlive: -1}, false)
	fits := MinStreamWindow / (1 + frameCharge)
	wire := p.Frame("open", []byte{'x'}, id(1))
	for range fits - 1 {
		wire = append(wire, p.Frame("stream data", []byte{'x'}, id(1))...)
	}
	go p.Conn.Write(wire)
	st := acceptWithin(t, srv).(*Stream)
	eventually(t, func() bool {
		st.mu.Lock()
		defer st.mu.Unlock()
		return st.ring.len() == fits
	}, "the stream holds every byte")
	st.mu.Lock()
	assert.Equal(t, minRing, len(*st.ring.box), "in a buffer of the smallest size")
	st.mu.Unlock()
	select {
	case <-srv.Done():
		t.Fatalf("the session ended within the window: %v", srv.Err())
	case <-time.After(50 * time.Millisecond):
	}

	go p.Conn.Write(p.Frame("stream data", []byte{'x'}, id(1)))
	body := readUntil(t, p, "go-away")
	assert.Equal(t, byte(goAwayProtocolError), body[4], "the go-away names a protocol error")
	<-srv.Done()
	assert.ErrorIs(t, srv.Err(), ErrProtocol)
	_, err := st.Read(make([]byte, 1))
	assert.ErrorIs(t, err, ErrSessionClosed, "the stream ends with its carrier, as reset")
}

// TestCreditFollowsTheReader: once the reader has taken half the window,
// the session grants it back in a credit frame for the stream.
func TestCreditFollowsTheReader(t *testing.T) {
	p, srv := keyholderServer(t, &Config{KeepAlive: -1, MaxStreamWindow: MinStreamWindow}, false)
	half := make([]byte, MinStreamWindow/2)
	require.NoError(t, p.Send("open", half, id(1)))
	st := acceptWithin(t, srv)
	go io.Copy(io.Discard, st)
	body := readUntil(t, p, "credit")
	assert.Equal(t, []byte{0, 0, 0, 1}, body[:4], "for stream 1")
	incr := uint64(body[4])<<24 | uint64(body[5])<<16 | uint64(body[6])<<8 | uint64(body[7])
	assert.Equal(t, uint64(len(half)+frameCharge), incr, "the data and the frame's charge, taken")
}

// TestOpenRules: stream ids go 1, 2, 3, ...; an open out of order, an id
// opened twice, or a frame for a stream never opened is a protocol error
// (docs/PROTOCOL.md 7.6); frames for a stream that has closed are
// ignored.
func TestOpenRules(t *testing.T) {
	for name, frames := range map[string][]string{
		"first open is not 1":    {"open 2"},
		"an id opened twice":     {"open 1", "open 1"},
		"an id skipped":          {"open 1", "open 3"},
		"data on a stream never": {"open 1", "stream data 2"},
		"end of a stream never":  {"end 4"},
	} {
		p, srv := keyholderServer(t, &Config{KeepAlive: -1}, true)
		var wire []byte
		for _, f := range frames {
			var typ string
			var n uint64
			switch f[len(f)-1] {
			case '1':
				n = 1
			case '2':
				n = 2
			case '3':
				n = 3
			case '4':
				n = 4
			}
			typ = f[:len(f)-2]
			wire = append(wire, p.Frame(typ, nil, id(n))...)
		}
		go p.Conn.Write(wire)
		go func() {
			for {
				if _, err := srv.Accept(); err != nil {
					return
				}
			}
		}()
		select {
		case <-srv.Done():
			assert.ErrorIs(t, srv.Err(), ErrProtocol, name)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the session lived on", name)
		}
	}

	// A stream reset by the server: what the key holder sent before it
	// knew is ignored.
	p, srv := keyholderServer(t, &Config{KeepAlive: -1}, true)
	require.NoError(t, p.Send("open", []byte("a"), id(1)))
	st := acceptWithin(t, srv)
	require.NoError(t, st.(*Stream).Reset())
	require.NoError(t, p.Send("stream data", []byte("late"), id(1)))
	require.NoError(t, p.Send("end", nil, id(1)))
	require.NoError(t, p.Send("open", []byte("b"), id(2)))
	st2 := acceptWithin(t, srv)
	buf := make([]byte, 1)
	_, err := io.ReadFull(st2, buf)
	require.NoError(t, err)
	assert.Equal(t, "b", string(buf))
	assert.NoError(t, srv.Err(), "frames of a reset stream are no error")
}

// TestRefusals: an open beyond MaxStreams, and a stream the server resets
// without having used it, are reset with the code refused (1); a stream
// the server read from is reset with code aborted (0).
func TestRefusals(t *testing.T) {
	p, srv := keyholderServer(t, &Config{KeepAlive: -1, MaxStreams: 1}, false)
	require.NoError(t, p.Send("open", []byte("a"), id(1)))
	require.NoError(t, p.Send("open", []byte("b"), id(2)))
	body := readUntil(t, p, "reset")
	assert.Equal(t, []byte{0, 0, 0, 2, resetRefused}, body, "stream 2: one too many, refused")

	st := acceptWithin(t, srv)
	_, err := io.ReadFull(st, make([]byte, 1))
	require.NoError(t, err)
	require.NoError(t, st.(*Stream).Reset())
	body = readUntil(t, p, "reset")
	assert.Equal(t, []byte{0, 0, 0, 1, resetAborted}, body, "stream 1: read from, then aborted")

	require.NoError(t, p.Send("open", nil, id(3)))
	st = acceptWithin(t, srv)
	require.NoError(t, st.Close())
	body = readUntil(t, p, "reset")
	assert.Equal(t, []byte{0, 0, 0, 3, resetRefused}, body, "stream 3: never used, refused")
}

// TestGoAwayIgnoresCrossingOpens: after a server's go-away (last stream
// id 1), an open of stream 2 that crossed it is ignored (the client
// counts it as refused); stream 1 carries on, and once it has closed the
// server ends the carrier cleanly.
func TestGoAwayIgnoresCrossingOpens(t *testing.T) {
	p, srv := keyholderServer(t, &Config{KeepAlive: -1}, false)
	require.NoError(t, p.Send("open", []byte("one"), id(1)))
	st := acceptWithin(t, srv).(*Stream)
	require.NoError(t, srv.GoAway())
	body := readUntil(t, p, "go-away")
	assert.Equal(t, []byte{0, 0, 0, 1, goAwayNoError}, body, "last stream id 1, no error")
	require.NoError(t, p.Send("open", []byte("two"), id(2)))
	require.NoError(t, p.Send("stream data", []byte("more"), id(2)))
	require.NoError(t, p.Send("end", nil, id(1)))
	got, err := io.ReadAll(st)
	require.NoError(t, err)
	assert.Equal(t, "one", string(got))
	require.NoError(t, st.CloseWrite())
	readUntil(t, p, "close-write")
	require.NoError(t, p.Send("close-write", nil, nil))
	<-srv.Done()
	assert.NoError(t, srv.Err())
	assert.Equal(t, 0, srv.NumStreams(), "stream 2 was never taken")
}

// TestPings: a ping is answered with its value; a session whose pings go
// unanswered ends with a timeout.
func TestPings(t *testing.T) {
	p, _ := keyholderServer(t, &Config{KeepAlive: -1}, false)
	require.NoError(t, p.Send("ping", nil, map[string]uint64{"opaque": 0xfeedface12345678}))
	assert.Equal(t, []byte{0xfe, 0xed, 0xfa, 0xce, 0x12, 0x34, 0x56, 0x78}, readUntil(t, p, "pong"))

	defer func(w time.Duration) { pongWait = w }(pongWait)
	pongWait = 50 * time.Millisecond
	_, srv := keyholderServer(t, &Config{KeepAlive: 20 * time.Millisecond}, true)
	select {
	case <-srv.Done():
		assert.ErrorIs(t, srv.Err(), os.ErrDeadlineExceeded, "no pong: the peer counts as gone")
	case <-time.After(10 * time.Second):
		t.Fatal("a session whose pings go unanswered lived on")
	}
}
