package spipe

import (
	"errors"
	"io"
	"net"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// echoServer serves spipe echo connections under cfg until the test ends.
// Its handshake results arrive on the returned channel.
func echoServer(t *testing.T, cfg *Config) (addr string, results <-chan error) {
	t.Helper()
	ln, err := Listen("tcp", "127.0.0.1:0", cfg)
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	res := make(chan error, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				sc := c.(*Conn)
				defer sc.Close()
				err := sc.Handshake()
				res <- err
				if err == nil {
					io.Copy(sc, sc)
					sc.CloseWrite()
				}
			}()
		}
	}()
	return ln.Addr().String(), res
}

// redirector is an attacker on the network: it accepts the connections
// meant for one address and splices them to another.
func redirector(t *testing.T, to string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", to)
				if err != nil {
					return
				}
				defer up.Close()
				go io.Copy(up, c)
				io.Copy(c, up)
			}()
		}
	}()
	return ln.Addr().String()
}

// tryEcho dials addr through cfg and echoes a message; nil if the whole
// exchange succeeded.
func tryEcho(t *testing.T, addr string, cfg *Config) error {
	c, err := Dial("tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	msg := []byte("for the intended server only")
	go func() {
		c.Write(msg)
		c.CloseWrite()
	}()
	got, err := io.ReadAll(c)
	if err == nil && string(got) != string(msg) {
		err = errors.New("echo differs")
	}
	return err
}

// TestRedirectBetweenTunnels: two listeners share one key. An attacker
// redirects a client of tunnel A to tunnel B's listener. With distinct
// contexts the handshake fails on both sides before B's server would do
// anything for the client; without contexts (the documented risk of
// sharing a key) the client lands on B unawares.
func TestRedirectBetweenTunnels(t *testing.T) {
	key := newTestKey(t)
	for _, distinct := range []bool{true, false} {
		ctxA, ctxB := "", ""
		if distinct {
			ctxA, ctxB = "db.example:5432", "mail.example:25"
		}
		addrB, resultsB := echoServer(t, &Config{Keys: []*Key{key}, Context: ctxB})
		_, _ = echoServer(t, &Config{Keys: []*Key{key}, Context: ctxA}) // tunnel A's real server, never reached
		towardA := redirector(t, addrB)                                 // the attacker's redirect

		err := tryEcho(t, towardA, &Config{Keys: []*Key{key}, Context: ctxA})
		serverErr := <-resultsB
		if distinct {
			assert.ErrorIs(t, err, ErrTruncated, "the client's handshake fails")
			assert.ErrorIs(t, serverErr, ErrAuthentication, "B refuses a client of A")
		} else {
			assert.NoError(t, err, "without contexts, a redirect between tunnels sharing a key goes unnoticed")
			assert.NoError(t, serverErr)
		}
	}
}

// TestReflectionToOwnListener: a host runs a listener and a client with
// the same key (the "Selfie" setting). An attacker reflects the host's
// client back into the host's own listener. Distinct contexts per tunnel
// make it fail; without them it succeeds.
func TestReflectionToOwnListener(t *testing.T) {
	key := newTestKey(t)
	for _, distinct := range []bool{true, false} {
		listenCtx, connectCtx := "", ""
		if distinct {
			listenCtx, connectCtx = "peer -> this host", "this host -> peer"
		}
		own, results := echoServer(t, &Config{Keys: []*Key{key}, Context: listenCtx})
		towardPeer := redirector(t, own) // the peer's address, reflected to ourselves

		err := tryEcho(t, towardPeer, &Config{Keys: []*Key{key}, Context: connectCtx})
		serverErr := <-results
		if distinct {
			assert.ErrorIs(t, err, ErrTruncated)
			assert.ErrorIs(t, serverErr, ErrAuthentication)
		} else {
			assert.NoError(t, err, "without contexts the host talks to itself unawares")
			assert.NoError(t, serverErr)
		}
	}
}

// TestContextMustMatch: ends with the same key and context connect; any
// difference in the context, even one byte or its length, fails as a
// wrong key does.
func TestContextMustMatch(t *testing.T) {
	key := newTestKey(t)
	for _, c := range []struct {
		client, server string
		ok             bool
	}{
		{"", "", true},
		{"tunnel", "tunnel", true},
		{"tunnel", "Tunnel", false},
		{"tunnel", "tunnel ", false},
		{"", "tunnel", false},
		{"a\x00", "a", false},
	} {
		a, b := testutil.TCPPair(t)
		_, _, cerr, serr := handshakePair(t, a, b, &Config{Keys: []*Key{key}, Context: c.client},
			&Config{Keys: []*Key{key}, Context: c.server})
		if c.ok {
			assert.NoError(t, cerr, "%q/%q", c.client, c.server)
			assert.NoError(t, serr)
			continue
		}
		assert.ErrorIs(t, serr, ErrAuthentication, "%q/%q", c.client, c.server)
		assert.ErrorIs(t, cerr, ErrTruncated, "%q/%q", c.client, c.server)
	}
}
