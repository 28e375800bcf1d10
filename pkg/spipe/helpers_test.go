package spipe

import (
	"context"
	"crypto/rand"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// newTestKey returns a fresh random key.
func newTestKey(t testing.TB) *Key {
	t.Helper()
	material := make([]byte, 32)
	_, err := rand.Read(material)
	require.NoError(t, err)
	k, err := NewKey(material)
	require.NoError(t, err)
	return k
}

// handshakePair runs both handshakes concurrently over a fresh connection
// pair from dial and returns both ends' errors.
func handshakePair(t testing.TB, a, b net.Conn, ccfg, scfg *Config) (*Conn, *Conn, error, error) {
	t.Helper()
	cli, srv := Client(a, ccfg), Server(b, scfg)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- cli.Handshake(ctx) }()
	serr := srv.Handshake(ctx)
	if serr != nil {
		b.Close() // unblock a client waiting for more
	}
	cerr := <-errc
	return cli, srv, cerr, serr
}

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t testing.TB) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			acc <- nil
			return
		}
		acc <- c
	}()
	a, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	b := <-acc
	require.NotNil(t, b)
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// pipePair returns the two ends of a net.Pipe.
func pipePair(t testing.TB) (net.Conn, net.Conn) {
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// connected returns an established client/server pair over tcp or pipe.
func connected(t testing.TB, transport string, ccfg, scfg *Config) (*Conn, *Conn) {
	t.Helper()
	var a, b net.Conn
	if transport == "tcp" {
		a, b = tcpPair(t)
	} else {
		a, b = pipePair(t)
	}
	cli, srv, cerr, serr := handshakePair(t, a, b, ccfg, scfg)
	require.NoError(t, cerr)
	require.NoError(t, serr)
	return cli, srv
}

func randomBytes(t testing.TB, n int) []byte {
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return b
}
