package spipe

import (
	"context"
	"crypto/rand"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/pkg/aead"
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
	go func() { errc <- cli.HandshakeContext(ctx) }()
	serr := srv.HandshakeContext(ctx)
	if serr != nil {
		b.Close() // unblock a client waiting for more
	}
	cerr := <-errc
	return cli, srv, cerr, serr
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
		a, b = testutil.TCPPair(t)
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

// policy is the forward-secrecy policy of a side that does (or skips) the
// X25519 exchange.
func policy(pfs bool) ForwardSecrecy {
	if pfs {
		return ForwardSecrecyPreferred
	}
	return ForwardSecrecyOff
}

// sealInner seals an arbitrary inner plaintext as frame counter of suite
// under key, following docs/PROTOCOL.md section 4 with pkg/aead directly,
// so tests can send authentic frames that break the format.
func sealInner(t testing.TB, suite aead.Suite, key []byte, counter uint64, inner []byte) []byte {
	t.Helper()
	header := []byte{byte(len(inner) >> 16), byte(len(inner) >> 8), byte(len(inner))}
	if suite.Secretbox() {
		box, err := aead.NewSecretbox(suite, key)
		require.NoError(t, err)
		var nonce [aead.NonceSizeX]byte
		aead.PutCounterNonce(nonce[:], counter)
		copy(nonce[8:], header)
		return box.Seal(header, &nonce, inner)
	}
	a, err := aead.New(suite, key)
	require.NoError(t, err)
	nonce := make([]byte, a.NonceSize())
	aead.PutCounterNonce(nonce, counter)
	return a.Seal(header, nonce, inner, header)
}

// errorIsAny reports whether err is any of targets.
func errorIsAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}
