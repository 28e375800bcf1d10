package mux_test

import (
	"crypto/rand"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/pkg/spipe"
	"github.com/spipe-dev/spipe/pkg/spipe/mux"
)

func testKey(t testing.TB) *spipe.Key {
	t.Helper()
	b := make([]byte, 32)
	rand.Read(b)
	k, err := spipe.NewKey(b)
	require.NoError(t, err)
	return k
}

// sessions runs the handshake over a and b (client, server) and returns
// the two sessions, closed at the end of the test.
func sessions(t testing.TB, a, b net.Conn, ccfg, scfg *mux.Config) (client, server *mux.Session) {
	t.Helper()
	key := testKey(t)
	cfg := &spipe.Config{Keys: []*spipe.Key{key}, Multiplex: true}
	var wg sync.WaitGroup
	var serr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		server, serr = mux.Server(spipe.Server(b, cfg), scfg)
	}()
	client, err := mux.Client(spipe.Client(a, cfg), ccfg)
	wg.Wait()
	require.NoError(t, err)
	require.NoError(t, serr)
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// pair is sessions over loopback TCP with default configs.
func pair(t testing.TB) (client, server *mux.Session) {
	t.Helper()
	a, b := testutil.TCPPair(t)
	return sessions(t, a, b, nil, nil)
}

// accept accepts one stream within a few seconds.
func accept(t testing.TB, s *mux.Session) *mux.Stream {
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
		return r.c.(*mux.Stream)
	case <-time.After(5 * time.Second):
		t.Fatal("no stream accepted within 5 s")
		return nil
	}
}

// readResult is what reading a stream to its end gave.
type readResult struct {
	data []byte
	err  error // nil for a clean end (io.EOF)
}

// readAll reads c to its end in the background.
func readAll(c net.Conn) <-chan readResult {
	ch := make(chan readResult, 1)
	go func() {
		var out []byte
		buf := make([]byte, 32<<10)
		for {
			n, err := c.Read(buf)
			out = append(out, buf[:n]...)
			if err != nil {
				if err.Error() == "EOF" {
					err = nil
				}
				ch <- readResult{out, err}
				return
			}
		}
	}()
	return ch
}

// wait returns r's result within a few seconds.
func wait(t testing.TB, r <-chan readResult) readResult {
	t.Helper()
	select {
	case res := <-r:
		return res
	case <-time.After(10 * time.Second):
		t.Fatal("read did not end within 10 s")
		return readResult{}
	}
}
