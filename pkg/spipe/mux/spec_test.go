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
// makes them play its traffic through this package's API: every byte each
// end puts on the wire must be the transcript's. The API has no call for a
// credit or a ping of one's own choosing, so those two are queued as the
// session queues them itself.
func TestImplementationMatchesVectors(t *testing.T) {
	for _, s := range spec.Suites {
		b, err := os.ReadFile(filepath.Join("../../../testdata/protocol-v2", s.Name+".json"))
		require.NoError(t, err)
		var f spec.File
		require.NoError(t, json.Unmarshal(b, &f))
		played := 0
		for _, se := range f.Sessions {
			if se.Mode != 3 {
				continue
			}
			played++
			t.Run(se.Name, func(t *testing.T) { playMuxSession(t, se) })
		}
		assert.Equal(t, 2, played, "%s: the mode-3 sessions", s.Name)
	}
}

func playMuxSession(t *testing.T, se spec.Session) {
	a, b := net.Pipe()
	ca, cb := &testutil.RecordingConn{Conn: a}, &testutil.RecordingConn{Conn: b}
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

	// Stream 1: the open carries the first data; the server answers,
	// grants back what it read, and both ends end their directions.
	c1, err := cli.Open(context.Background())
	require.NoError(t, err)
	_, err = c1.Write([]byte("hello, server"))
	require.NoError(t, err)
	s1 := acceptWithin(t, srv)
	got := make([]byte, 13)
	_, err = io.ReadFull(s1, got)
	require.NoError(t, err)
	assert.Equal(t, "hello, server", string(got))
	_, err = s1.Write([]byte("hello, client"))
	require.NoError(t, err)
	srv.ctl.queue(control1{typ: creditItem, f: streamFrame{id: 1, incr: 13 + frameCharge}})
	st1 := c1.(*Stream)
	eventually(t, func() bool {
		st1.mu.Lock()
		defer st1.mu.Unlock()
		return st1.tx.limit == MinStreamWindow+13+frameCharge
	}, "the credit reached the client")
	require.NoError(t, st1.CloseWrite())
	rest, err := io.ReadAll(s1)
	require.NoError(t, err)
	assert.Empty(t, rest)
	require.NoError(t, s1.(*Stream).CloseWrite())
	back, err := io.ReadAll(c1)
	require.NoError(t, err)
	assert.Equal(t, "hello, client", string(back))

	// Stream 2: opened by a reader, without data; the server refuses it
	// (its reset of a stream it never used).
	c2, err := cli.Open(context.Background())
	require.NoError(t, err)
	read2 := make(chan error, 1)
	go func() { _, err := c2.Read(make([]byte, 1)); read2 <- err }()
	s2 := acceptWithin(t, srv)
	require.NoError(t, s2.(*Stream).Reset())
	assert.ErrorIs(t, <-read2, ErrStreamReset)

	// A ping and its pong; then the server goes away, and with nothing
	// open both ends send their close-write.
	cli.ka.mu.Lock()
	cli.ka.pingLocked()
	cli.ka.mu.Unlock()
	eventually(t, func() bool {
		cli.ka.mu.Lock()
		defer cli.ka.mu.Unlock()
		return !cli.ka.outstanding
	}, "the pong reached the client")
	require.NoError(t, srv.GoAway())
	for _, sess := range []*Session{cli, srv} {
		select {
		case <-sess.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("a session did not end after go-away with nothing open")
		}
		assert.NoError(t, sess.Err())
	}

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
