package spipe

import (
	"context"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/aead"
)

// runHandshakes runs both ends' handshakes and returns their errors.
func runHandshakes(t testing.TB, cli, srv *Conn) (cerr, serr error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- cli.HandshakeContext(ctx) }()
	serr = srv.HandshakeContext(ctx)
	cerr = <-errc
	return cerr, serr
}

func TestHandshakeNegotiation(t *testing.T) {
	k := newTestKey(t)
	cases := []struct {
		name           string
		client, server Config
		suite          aead.Suite
		pfs            bool
		cerr, serr     error
	}{
		{name: "defaults", suite: aead.ChaCha20Poly1305, pfs: true},
		{name: "server order wins", client: Config{Suites: []aead.Suite{aead.XSalsa20Poly1305, aead.ChaCha20Poly1305}},
			server: Config{Suites: []aead.Suite{aead.ChaCha20Poly1305, aead.XSalsa20Poly1305}}, suite: aead.ChaCha20Poly1305, pfs: true},
		{name: "server prefers xsalsa", server: Config{Suites: []aead.Suite{aead.XSalsa20Poly1305, aead.ChaCha20Poly1305}}, suite: aead.XSalsa20Poly1305, pfs: true},
		{name: "reduced only if client lists it", server: Config{Suites: []aead.Suite{aead.ChaCha8Poly1305, aead.ChaCha20Poly1305}},
			suite: aead.ChaCha20Poly1305, pfs: true},
		{name: "reduced when both list it", client: Config{Suites: []aead.Suite{aead.ChaCha20Poly1305, aead.ChaCha8Poly1305}},
			server: Config{Suites: []aead.Suite{aead.ChaCha8Poly1305, aead.ChaCha20Poly1305}}, suite: aead.ChaCha8Poly1305, pfs: true},
		{name: "no shared suite", client: Config{Suites: []aead.Suite{aead.ChaCha12Poly1305}},
			cerr: ErrTruncated, serr: ErrNoSharedSuite},
		{name: "client pfs off", client: Config{ForwardSecrecy: ForwardSecrecyOff}, suite: aead.ChaCha20Poly1305},
		{name: "server pfs off", server: Config{ForwardSecrecy: ForwardSecrecyOff}, suite: aead.ChaCha20Poly1305},
		{name: "both pfs off", client: Config{ForwardSecrecy: ForwardSecrecyOff}, server: Config{ForwardSecrecy: ForwardSecrecyOff}, suite: aead.ChaCha20Poly1305},
		{name: "server requires pfs, client has it", server: Config{ForwardSecrecy: ForwardSecrecyRequired}, suite: aead.ChaCha20Poly1305, pfs: true},
		{name: "server refuses no-pfs client", client: Config{ForwardSecrecy: ForwardSecrecyOff}, server: Config{ForwardSecrecy: ForwardSecrecyRequired},
			cerr: ErrTruncated, serr: ErrForwardSecrecyRequired},
		{name: "client refuses no-pfs server", client: Config{ForwardSecrecy: ForwardSecrecyRequired}, server: Config{ForwardSecrecy: ForwardSecrecyOff},
			cerr: ErrForwardSecrecyRequired, serr: ErrTruncated},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ccfg, scfg := tc.client, tc.server
			ccfg.Keys, scfg.Keys = []*Key{k}, []*Key{k}
			a, b := pipePair(t)
			cli, srv := Client(a, &ccfg), Server(b, &scfg)
			cerr, serr := runHandshakes(t, cli, srv)
			if tc.cerr != nil || tc.serr != nil {
				assert.ErrorIs(t, cerr, tc.cerr, "client")
				assert.ErrorIs(t, serr, tc.serr, "server")
				return
			}
			require.NoError(t, cerr)
			require.NoError(t, serr)
			for _, c := range []*Conn{cli, srv} {
				st := c.ConnectionState()
				assert.True(t, st.HandshakeComplete)
				assert.Equal(t, tc.suite, st.Suite)
				assert.Equal(t, tc.pfs, st.ForwardSecrecy)
			}
			roundTripOnce(t, cli, srv, 3000)
		})
	}
}

// roundTripOnce sends n bytes each way and checks them.
func roundTripOnce(t *testing.T, a, b *Conn, n int) {
	t.Helper()
	for _, p := range [][2]*Conn{{a, b}, {b, a}} {
		msg := randomBytes(t, n)
		errc := make(chan error, 1)
		go func() { _, err := p[0].Write(msg); errc <- err }()
		got := make([]byte, n)
		_, err := io.ReadFull(p[1], got)
		require.NoError(t, err)
		require.NoError(t, <-errc)
		assert.Equal(t, msg, got)
	}
}

func TestHandshakeWrongKey(t *testing.T) {
	a, b := pipePair(t)
	cli := Client(a, &Config{Keys: []*Key{newTestKey(t)}})
	srv := Server(b, &Config{Keys: []*Key{newTestKey(t), newTestKey(t)}})
	cerr, serr := runHandshakes(t, cli, srv)
	assert.ErrorIs(t, serr, ErrAuthentication)
	assert.ErrorIs(t, cerr, ErrTruncated)
	assert.ErrorContains(t, cerr, "wrong key or context", "the client lists the likely causes")
	// The failure sticks, and the connection is unusable.
	_, err := srv.Read(make([]byte, 1))
	assert.ErrorIs(t, err, ErrAuthentication)
	_, err = cli.Write([]byte("x"))
	assert.ErrorIs(t, err, ErrTruncated)
}

func TestHandshakeKeyRotation(t *testing.T) {
	keys := []*Key{newTestKey(t), newTestKey(t), newTestKey(t)}
	for i, k := range keys {
		a, b := pipePair(t)
		cli, srv := Client(a, &Config{Keys: []*Key{k}}), Server(b, &Config{Keys: keys})
		cerr, serr := runHandshakes(t, cli, srv)
		require.NoError(t, cerr)
		require.NoError(t, serr)
		assert.Equal(t, i, srv.ConnectionState().KeyIndex)
		roundTripOnce(t, cli, srv, 100)
	}
}

// rawPeer runs f against one end of a pipe whose other end is a real
// client or server, and returns that end.
func rawPeer(t *testing.T, f func(c net.Conn)) net.Conn {
	a, b := pipePair(t)
	go func() {
		f(b)
		b.Close()
	}()
	return a
}

func TestHandshakeWrongVersion(t *testing.T) {
	k := newTestKey(t)
	cfg := &Config{Keys: []*Key{k}}
	ctx := context.Background()

	for _, v := range []byte{1, 3} {
		// A client of another version (its message may have any shape).
		conn := rawPeer(t, func(c net.Conn) {
			c.Write([]byte{v, msgClientHello, 0, 0, 0, 2})
			io.Copy(io.Discard, c)
		})
		err := Server(conn, cfg).HandshakeContext(ctx)
		assert.ErrorIs(t, err, ErrVersion, "client of version %d", v)

		// A server answering with another version.
		conn = rawPeer(t, func(c net.Conn) {
			buf := make([]byte, helloSize)
			io.ReadFull(c, buf)
			buf[0] = v
			c.Write(buf)
		})
		assert.ErrorIs(t, Client(conn, cfg).HandshakeContext(ctx), ErrVersion, "server of version %d", v)
	}
}

func TestHandshakeTimeout(t *testing.T) {
	k := newTestKey(t)
	silent := func(c net.Conn) { io.Copy(io.Discard, c) }

	start := time.Now()
	cfg := &Config{Keys: []*Key{k}, HandshakeTimeout: 50 * time.Millisecond}
	err := Server(rawPeer(t, silent), cfg).Handshake()
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 3*time.Second)

	// A context deadline earlier than HandshakeTimeout wins.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err = Client(rawPeer(t, silent), &Config{Keys: []*Key{k}}).HandshakeContext(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	// Cancellation interrupts a blocked handshake.
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	err = Server(rawPeer(t, silent), &Config{Keys: []*Key{k}}).HandshakeContext(ctx)
	assert.ErrorIs(t, err, context.Canceled)
}

// TestHandshakeRestoresDeadlines: a deadline set before the handshake
// (which runs under its own bound) applies again after it.
func TestHandshakeRestoresDeadlines(t *testing.T) {
	k := newTestKey(t)
	cfg := &Config{Keys: []*Key{k}}
	a, b := pipePair(t)
	cli, srv := Client(a, cfg), Server(b, cfg)
	require.NoError(t, srv.SetReadDeadline(time.Now().Add(300*time.Millisecond)))
	cerr, serr := runHandshakes(t, cli, srv)
	require.NoError(t, cerr)
	require.NoError(t, serr)
	done := make(chan error, 1)
	go func() { _, err := srv.Read(make([]byte, 1)); done <- err }()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	case <-time.After(5 * time.Second):
		t.Fatal("the deadline set before the handshake was lost")
	}
}
