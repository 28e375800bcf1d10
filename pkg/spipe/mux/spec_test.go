package mux

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/spec"
	"github.com/spipe-dev/spipe/pkg/aead"
	"github.com/spipe-dev/spipe/pkg/spipe"
	"github.com/spipe-dev/spipe/pkg/spipe/internal/testhook"
)

// TestImplementationMatchesVectors runs a client and a server session
// over pkg/spipe with each published mode-3 session's randomness
// (testdata/protocol-v2, derived from docs/PROTOCOL.md by
// internal/testutil/spec, which shares no code with this package) and
// makes them play its story through this package's API: every byte each
// end puts on the wire must be the transcript's. The API has no call for a
// credit or a ping of one's own choosing, so those are queued as the
// session queues them itself (and a credit for a stream never opened, to
// commit a protocol error, likewise).
func TestImplementationMatchesVectors(t *testing.T) {
	plays := map[string]func(t *testing.T, p *vectorPlay){
		"":                playFirstStory,
		"client-data":     playClientData,
		"protocol-error":  playProtocolError,
		"go-away-refuses": playGoAwayRefuses,
	}
	for _, s := range spec.Suites {
		b, err := os.ReadFile(filepath.Join("../../../testdata/protocol-v2", s.Name+".json"))
		require.NoError(t, err)
		var f spec.File
		require.NoError(t, json.Unmarshal(b, &f))
		played := map[string]int{}
		for _, se := range f.Sessions {
			if se.Mode != 3 {
				continue
			}
			play := plays[se.Story]
			require.NotNil(t, play, "%s: a story this test does not know", se.Name)
			played[se.Story]++
			t.Run(se.Name, func(t *testing.T) { playMuxSession(t, se, play) })
		}
		assert.Equal(t, map[string]int{"": 2, "client-data": 1, "protocol-error": 1, "go-away-refuses": 1}, played,
			"%s: the mode-3 sessions", s.Name)
	}
}

// vectorPlay is a client and a server session over a pipe, each end's
// writes recorded; the server's can be held.
type vectorPlay struct {
	cli, srv *Session
	held     *testutil.HeldWrites // the server's side of the pipe
}

func playMuxSession(t *testing.T, se spec.Session, play func(t *testing.T, p *vectorPlay)) {
	a, b := net.Pipe()
	held := &testutil.HeldWrites{Conn: b}
	ca, cb := &testutil.RecordingConn{Conn: a}, &testutil.RecordingConn{Conn: held}
	noPings := &Config{KeepAlive: -1}
	var srv *Session
	var serr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv, serr = Server(spipe.Server(cb, vectorConfig(t, se, se.Server)), noPings)
	}()
	cli, err := Client(spipe.Client(ca, vectorConfig(t, se, se.Client)), noPings)
	require.NoError(t, err)
	<-done
	require.NoError(t, serr)
	t.Cleanup(func() { held.Release(); cli.Close(); srv.Close() })

	play(t, &vectorPlay{cli: cli, srv: srv, held: held})

	var wantC2S, wantS2C []byte
	wantC2S = append(append(wantC2S, se.ClientHello...), se.ClientFinished...)
	wantS2C = append(wantS2C, se.ServerHello...)
	for _, f := range se.Frames {
		if f.Direction == "c2s" {
			wantC2S = append(wantC2S, f.Frame...)
		} else {
			wantS2C = append(wantS2C, f.Frame...)
		}
	}
	assert.Equal(t, hex.EncodeToString(wantC2S), hex.EncodeToString(ca.Bytes()), "client to server")
	assert.Equal(t, hex.EncodeToString(wantS2C), hex.EncodeToString(cb.Bytes()), "server to client")
}

// endsWithin waits for each session to end, and returns their errors.
func endsWithin(t *testing.T, sessions ...*Session) []error {
	t.Helper()
	var errs []error
	for _, sess := range sessions {
		select {
		case <-sess.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("a session did not end")
		}
		errs = append(errs, sess.Err())
	}
	return errs
}

// creditFor queues a credit of incr for stream id, as the session does
// when its reader has taken enough, and waits until the peer's stream
// (peer) has it.
func creditFor(t *testing.T, s *Session, id, incr uint32, peer *Stream) {
	t.Helper()
	s.ctl.queue(control1{typ: creditItem, f: streamFrame{id: id, incr: incr}})
	eventually(t, func() bool {
		peer.mu.Lock()
		defer peer.mu.Unlock()
		return peer.tx.limit == MinStreamWindow+uint64(incr)
	}, "the credit reached the peer")
}

// openWith opens a client stream whose open carries data.
func openWith(t *testing.T, cli *Session, data string) net.Conn {
	t.Helper()
	c, err := cli.Open(context.Background())
	require.NoError(t, err)
	_, err = c.Write([]byte(data))
	require.NoError(t, err)
	return c
}

// endBothWays ends a stream's client direction (c), reads the rest at the
// server (s), ends the server's direction and reads the rest at the
// client; it returns what each read.
func endBothWays(t *testing.T, c, s net.Conn) (atServer, atClient string) {
	t.Helper()
	require.NoError(t, c.(*Stream).CloseWrite())
	a, err := io.ReadAll(s)
	require.NoError(t, err)
	require.NoError(t, s.(*Stream).CloseWrite())
	b, err := io.ReadAll(c)
	require.NoError(t, err)
	return string(a), string(b)
}

// playFirstStory: stream 1's open carries the first data; the server
// answers, grants back what it read, and both ends end their directions;
// stream 2 is opened by a reader, without data, and refused; a ping and
// its pong; then the server goes away, and with nothing open both ends
// send their close-write.
func playFirstStory(t *testing.T, p *vectorPlay) {
	cli, srv := p.cli, p.srv
	c1 := openWith(t, cli, "hello, server")
	s1 := acceptWithin(t, srv)
	got := make([]byte, 13)
	_, err := io.ReadFull(s1, got)
	require.NoError(t, err)
	assert.Equal(t, "hello, server", string(got))
	_, err = s1.Write([]byte("hello, client"))
	require.NoError(t, err)
	creditFor(t, srv, 1, 13+frameCharge, c1.(*Stream))
	rest, back := endBothWays(t, c1, s1)
	assert.Empty(t, rest)
	assert.Equal(t, "hello, client", back)

	c2, err := cli.Open(context.Background())
	require.NoError(t, err)
	read2 := make(chan error, 1)
	go func() { _, err := c2.Read(make([]byte, 1)); read2 <- err }()
	s2 := acceptWithin(t, srv)
	require.NoError(t, s2.(*Stream).Reset())
	assert.ErrorIs(t, <-read2, ErrStreamReset)

	cli.ka.mu.Lock()
	cli.ka.pingLocked()
	cli.ka.mu.Unlock()
	eventually(t, func() bool {
		cli.ka.mu.Lock()
		defer cli.ka.mu.Unlock()
		return !cli.ka.outstanding
	}, "the pong reached the client")
	require.NoError(t, srv.GoAway())
	for _, err := range endsWithin(t, cli, srv) {
		assert.NoError(t, err)
	}
}

// playClientData: the client writes twice on stream 1, and each end
// grants back the charge of what its reader took; after both ends have
// ended stream 1, the client goes away.
func playClientData(t *testing.T, p *vectorPlay) {
	cli, srv := p.cli, p.srv
	c1 := openWith(t, cli, "hello, server")
	_, err := c1.Write([]byte("and more"))
	require.NoError(t, err)
	s1 := acceptWithin(t, srv)
	got := make([]byte, 21)
	_, err = io.ReadFull(s1, got)
	require.NoError(t, err)
	assert.Equal(t, "hello, serverand more", string(got))
	creditFor(t, srv, 1, 13+frameCharge+8+frameCharge, c1.(*Stream))
	_, err = s1.Write([]byte("hello, client"))
	require.NoError(t, err)
	back := make([]byte, 13)
	_, err = io.ReadFull(c1, back)
	require.NoError(t, err)
	assert.Equal(t, "hello, client", string(back))
	creditFor(t, cli, 1, 13+frameCharge, s1.(*Stream))
	atServer, atClient := endBothWays(t, c1, s1)
	assert.Empty(t, atServer)
	assert.Empty(t, atClient)
	require.NoError(t, cli.GoAway())
	for _, err := range endsWithin(t, cli, srv) {
		assert.NoError(t, err)
	}
}

// playProtocolError: after opening stream 1, the client sends credit for
// stream 2, which it never opened; the server answers with go-away, code
// protocol error, naming stream 1, and the carrier fails.
func playProtocolError(t *testing.T, p *vectorPlay) {
	cli, srv := p.cli, p.srv
	c1 := openWith(t, cli, "hello, server")
	cli.ctl.queue(control1{typ: creditItem, f: streamFrame{id: 2, incr: 77}})
	errs := endsWithin(t, srv, cli)
	assert.ErrorIs(t, errs[0], ErrProtocol, "the server found the protocol error")
	assert.ErrorIs(t, errs[1], ErrProtocol, "the client heard of it in the go-away")
	_, err := c1.Read(make([]byte, 1))
	assert.ErrorIs(t, err, ErrSessionClosed, "stream 1 ends as reset with its carrier")
}

// playGoAwayRefuses: the server goes away having received the open of
// stream 1 only (its writes are held, so the go-away reaches the client
// only after the client has opened streams 2 and 3); the server ignores
// those opens, and the client counts them as refused on receiving the
// go-away; stream 1 then ends cleanly both ways.
func playGoAwayRefuses(t *testing.T, p *vectorPlay) {
	cli, srv := p.cli, p.srv
	c1 := openWith(t, cli, "hello, server")
	s1 := acceptWithin(t, srv)
	p.held.Hold()
	require.NoError(t, srv.GoAway())
	eventually(t, func() bool { return p.held.Blocked() > 0 }, "the go-away is on its way")
	later := []net.Conn{openWith(t, cli, "second"), openWith(t, cli, "third")}
	p.held.Release()
	<-cli.GoingAway()
	for _, c := range later {
		_, err := c.Read(make([]byte, 1))
		assert.ErrorIs(t, err, errRefused, "a stream above the go-away's last stream id is refused")
	}
	atServer, atClient := endBothWays(t, c1, s1)
	assert.Equal(t, "hello, server", atServer)
	assert.Empty(t, atClient)
	for _, err := range endsWithin(t, cli, srv) {
		assert.NoError(t, err)
	}
	assert.Equal(t, 0, srv.NumStreams(), "the server took neither stream 2 nor 3")
}

// vectorConfig is the Config of one end of a published session, drawing
// its randomness from the recorded nonce and ephemeral key.
func vectorConfig(t *testing.T, se spec.Session, e spec.EndInputs) *spipe.Config {
	key, err := spipe.NewKey(se.KeyFile)
	require.NoError(t, err)
	c := &spipe.Config{Keys: []*spipe.Key{key}, Context: se.Context, MaxPayload: e.MaxPayload, PadTo: e.PadTo, Multiplex: true}
	for _, s := range e.Suites {
		c.Suites = append(c.Suites, aead.Suite(s))
	}
	if len(e.EphemeralPrivate) == 0 {
		c.ForwardSecrecy = spipe.ForwardSecrecyOff
	}
	testhook.WithRand(c, bytes.NewReader(append(append([]byte(nil), e.Nonce...), e.EphemeralPrivate...)))
	return c
}

func acceptWithin(t *testing.T, s *Session) net.Conn {
	t.Helper()
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() { c, err := s.Accept(); ch <- res{c, err} }()
	select {
	case r := <-ch:
		require.NoError(t, r.err)
		return r.c
	case <-time.After(10 * time.Second):
		t.Fatal("no stream accepted within 10 s")
		return nil
	}
}

func eventually(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(errors.New(what + ": not within 10 s"))
		}
		time.Sleep(time.Millisecond)
	}
}
