package spipe

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/aead"
	"github.com/spipe-dev/spipe/pkg/spipe/frame"
)

// exchange writes a to the client and b to the server at once, each side
// closing its write half after, and checks each side reads exactly the
// other's bytes then io.EOF.
func exchange(t *testing.T, cli, srv *Conn, a, b []byte) {
	t.Helper()
	var wg sync.WaitGroup
	send := func(c *Conn, p []byte, errp *error) {
		defer wg.Done()
		// Odd-sized writes exercise frame splitting.
		for len(p) > 0 {
			n := min(len(p), 100003)
			if _, err := c.Write(p[:n]); err != nil {
				*errp = err
				return
			}
			p = p[n:]
		}
		*errp = c.CloseWrite()
	}
	var errA, errB error
	var gotA, gotB []byte
	var rerrA, rerrB error
	wg.Add(4)
	go send(cli, a, &errA)
	go send(srv, b, &errB)
	go func() { defer wg.Done(); gotA, rerrA = io.ReadAll(srv) }()
	go func() { defer wg.Done(); gotB, rerrB = io.ReadAll(cli) }()
	wg.Wait()
	require.NoError(t, errA)
	require.NoError(t, errB)
	require.NoError(t, rerrA)
	require.NoError(t, rerrB)
	assert.True(t, bytes.Equal(a, gotA), "client to server: %d bytes sent, %d received", len(a), len(gotA))
	assert.True(t, bytes.Equal(b, gotB), "server to client: %d bytes sent, %d received", len(b), len(gotB))
}

func TestRoundTripSizes(t *testing.T) {
	k := newTestKey(t)
	cfg := &Config{Keys: []*Key{k}}
	sizes := []int{0, 1, 2, 1000, DefaultMaxPayload - 1, DefaultMaxPayload, DefaultMaxPayload + 1, 1 << 20, 8 << 20}
	if testing.Short() {
		sizes = sizes[:len(sizes)-1]
	}
	for _, transport := range []string{"pipe", "tcp"} {
		for _, n := range sizes {
			if transport == "pipe" && n > 1<<20 {
				continue
			}
			t.Run(fmt.Sprintf("%s/%d", transport, n), func(t *testing.T) {
				cli, srv := connected(t, transport, cfg, cfg)
				exchange(t, cli, srv, randomBytes(t, n), randomBytes(t, n/2))
			})
		}
	}
}

func TestRoundTripEverySuiteAndOption(t *testing.T) {
	k := newTestKey(t)
	for _, suite := range aead.Suites() {
		for _, pfs := range []bool{true, false} {
			for _, pad := range []int{0, 512} {
				name := fmt.Sprintf("%s/pfs=%v/pad=%d", suite, pfs, pad)
				t.Run(name, func(t *testing.T) {
					cfg := &Config{Keys: []*Key{k}, Suites: []aead.Suite{suite}, ForwardSecrecy: policy(pfs), PadTo: pad}
					cli, srv := connected(t, "tcp", cfg, cfg)
					assert.Equal(t, suite, cli.ConnectionState().Suite)
					assert.Equal(t, pfs, srv.ConnectionState().ForwardSecrecy)
					exchange(t, cli, srv, randomBytes(t, 200_000), randomBytes(t, 777))
				})
			}
		}
	}
}

// TestHalfClose: each side closes its write half in turn while the other
// keeps sending, over both transports.
func TestHalfClose(t *testing.T) {
	k := newTestKey(t)
	cfg := &Config{Keys: []*Key{k}}
	for _, transport := range []string{"pipe", "tcp"} {
		for _, first := range []string{"client", "server"} {
			t.Run(transport+"/"+first, func(t *testing.T) {
				cli, srv := connected(t, transport, cfg, cfg)
				closer, other := cli, srv
				if first == "server" {
					closer, other = srv, cli
				}
				msg := randomBytes(t, 5000)
				go func() {
					closer.Write(msg)
					closer.CloseWrite()
				}()
				got, err := io.ReadAll(other)
				require.NoError(t, err)
				assert.Equal(t, msg, got)
				// The closed side can still read, the other can still write.
				_, err = closer.Write([]byte("x"))
				assert.ErrorIs(t, err, errWriteClosed)
				assert.NoError(t, closer.CloseWrite(), "CloseWrite twice is harmless")
				reply := randomBytes(t, 3000)
				go func() {
					other.Write(reply)
					other.CloseWrite()
				}()
				got, err = io.ReadAll(closer)
				require.NoError(t, err)
				assert.Equal(t, reply, got)
				// Read after EOF stays at EOF.
				_, err = closer.Read(make([]byte, 1))
				assert.ErrorIs(t, err, io.EOF)
			})
		}
	}
}

// TestCloseWithoutCloseWriteIsTruncation: Close sends nothing, so a peer
// that got no CloseWrite sees the data, then ErrTruncated, never a clean
// end: a connection closed on an error path cannot pass for a complete
// stream. With CloseWrite first, the same exchange ends in io.EOF.
func TestCloseWithoutCloseWriteIsTruncation(t *testing.T) {
	k := newTestKey(t)
	cfg := &Config{Keys: []*Key{k}}
	for _, transport := range []string{"pipe", "tcp"} {
		abandoned, srv := connected(t, transport, cfg, cfg)
		go func() {
			abandoned.Write([]byte("partial"))
			abandoned.Close()
		}()
		got, err := io.ReadAll(srv)
		assert.ErrorIs(t, err, ErrTruncated, transport)
		assert.Equal(t, "partial", string(got), transport)

		finished, srv := connected(t, transport, cfg, cfg)
		go func() {
			finished.Write([]byte("complete"))
			finished.CloseWrite()
			finished.Close()
		}()
		got, err = io.ReadAll(srv)
		assert.NoError(t, err, transport)
		assert.Equal(t, "complete", string(got), transport)
	}

	cli, _ := connected(t, "tcp", cfg, cfg)
	require.NoError(t, cli.Close())
	assert.ErrorIs(t, cli.Close(), net.ErrClosed)
	_, err := cli.Write([]byte("x"))
	assert.ErrorIs(t, err, net.ErrClosed)
	_, err = cli.Read(make([]byte, 1))
	assert.ErrorIs(t, err, net.ErrClosed)
}

// TestCloseUnblocksReadAndWrite: a blocked Read and a blocked Write (net.Pipe
// has no buffer and nobody reads the other end) both return after Close.
func TestCloseUnblocksReadAndWrite(t *testing.T) {
	k := newTestKey(t)
	cfg := &Config{Keys: []*Key{k}}
	cli, _ := connected(t, "pipe", cfg, cfg)
	errs := make(chan error, 2)
	go func() { _, err := cli.Read(make([]byte, 10)); errs <- err }()
	go func() { _, err := cli.Write(make([]byte, 10)); errs <- err }()
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, cli.Close())
	for range 2 {
		select {
		case err := <-errs:
			assert.ErrorIs(t, err, net.ErrClosed)
		case <-time.After(5 * time.Second):
			t.Fatal("Close did not unblock")
		}
	}
}

// TestReadTimeoutIsResumable: a Read that times out in the middle of a
// frame continues it on the next Read.
func TestReadTimeoutIsResumable(t *testing.T) {
	recv, raw, seal := establishedReader(t, aead.ChaCha20Poly1305, &Config{})
	frame := seal.Seal(nil, 0, frame.Data, []byte("hello, world"), 0)
	rest := make(chan struct{})
	go func() {
		// One goroutine, so the two halves arrive in order.
		raw.Write(frame[:10])
		<-rest
		raw.Write(frame[10:])
	}()
	require.NoError(t, recv.SetReadDeadline(time.Now().Add(50*time.Millisecond)))
	_, err := recv.Read(make([]byte, 100))
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	require.NoError(t, recv.SetReadDeadline(time.Time{}))
	close(rest)
	buf := make([]byte, 100)
	n, err := recv.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "hello, world", string(buf[:n]))
}

// establishedReader returns a Conn past its handshake reading from raw,
// and the frame.Cipher that seals what it expects.
func establishedReader(t testing.TB, suite aead.Suite, cfg *Config) (*Conn, net.Conn, *frame.Cipher) {
	c, raw, seal, _ := establishedReaderKey(t, suite, cfg)
	return c, raw, seal
}

// establishedReaderKey is establishedReader that also returns the key the
// Conn opens frames with.
func establishedReaderKey(t testing.TB, suite aead.Suite, cfg *Config) (*Conn, net.Conn, *frame.Cipher, []byte) {
	t.Helper()
	a, b := pipePair(t)
	cfg.Keys = []*Key{newTestKey(t)}
	s, err := cfg.settings()
	require.NoError(t, err)
	key := randomBytes(t, 32)
	c := Server(a, cfg)
	require.NoError(t, c.install(s, &handshakeResult{
		suite: suite, sendLimit: s.maxPayload,
		sendKey: randomBytes(t, 32), recvKey: append([]byte(nil), key...),
	}))
	c.hsDone.Store(true)
	seal, err := frame.NewCipher(suite, key)
	require.NoError(t, err)
	return c, b, seal, key
}

func TestCounterExhaustion(t *testing.T) {
	// Receiving: the frame after frame.MaxCounter fails.
	recv, raw, seal := establishedReader(t, aead.ChaCha20Poly1305, &Config{})
	recv.in.counter = frame.MaxCounter
	go raw.Write(seal.Seal(nil, frame.MaxCounter, frame.Data, []byte("last"), 0))
	buf := make([]byte, 10)
	n, err := recv.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "last", string(buf[:n]))
	go raw.Write(seal.Seal(nil, 0, frame.Data, []byte("wrapped"), 0))
	n, err = recv.Read(buf)
	assert.Zero(t, n)
	assert.ErrorIs(t, err, ErrCounterExhausted)

	// Sending: the last counter is used, then Write fails.
	k := newTestKey(t)
	cfg := &Config{Keys: []*Key{k}}
	cli, srv := connected(t, "tcp", cfg, cfg)
	cli.out.counter = frame.MaxCounter
	srv.in.counter = frame.MaxCounter
	_, err = cli.Write([]byte("last"))
	require.NoError(t, err)
	n, err = srv.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "last", string(buf[:n]))
	_, err = cli.Write([]byte("more"))
	assert.ErrorIs(t, err, ErrCounterExhausted)
}

// TestOversizeHeaderFailsBeforeReadingPayload: a header announcing more
// than the limit fails at once, without waiting for the payload.
func TestOversizeHeaderFailsBeforeReadingPayload(t *testing.T) {
	recv, raw, _ := establishedReader(t, aead.ChaCha20Poly1305, &Config{MaxPayload: 4096})
	go raw.Write([]byte{0, 0x10, 0x01}) // 4097, and nothing after
	done := make(chan error, 1)
	go func() { _, err := recv.Read(make([]byte, 10)); done <- err }()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, ErrFrameTooLarge)
	case <-time.After(5 * time.Second):
		t.Fatal("Read waited for the announced payload")
	}
	// The connection is dead: the raw side sees it closed.
	_, err := raw.Write([]byte{0})
	assert.Error(t, err)
}

func TestUnknownFrameTypeIsFatal(t *testing.T) {
	recv, raw, seal, key := establishedReaderKey(t, aead.XSalsa20Poly1305, &Config{})
	go func() {
		raw.Write(seal.Seal(nil, 0, frame.Keepalive, nil, 0))
		raw.Write(seal.Seal(nil, 1, frame.Data, []byte("ok"), 0))
		raw.Write(sealInner(t, aead.XSalsa20Poly1305, key, 2, []byte{'?', '?', 0x7f}))
	}()
	got, err := io.ReadAll(recv)
	assert.Equal(t, "ok", string(got))
	assert.ErrorIs(t, err, ErrMalformedFrame)
	_, err = recv.Read(make([]byte, 1))
	assert.ErrorIs(t, err, ErrMalformedFrame, "the error is sticky")
}

// TestFrameSizesOnTheWire checks max payload negotiation (the smaller limit
// wins) and padding, by looking at the frames crossing a proxy.
func TestFrameSizesOnTheWire(t *testing.T) {
	k := newTestKey(t)
	cases := []struct {
		name           string
		client, server Config
		check          func(t *testing.T, payload int)
	}{
		{"server limit wins", Config{MaxPayload: MaxPayloadLimit}, Config{MaxPayload: 4096},
			func(t *testing.T, n int) { assert.LessOrEqual(t, n, 4096) }},
		{"client limit wins", Config{MaxPayload: 1000}, Config{MaxPayload: MaxPayloadLimit},
			func(t *testing.T, n int) { assert.LessOrEqual(t, n, 1000) }},
		{"padding", Config{PadTo: 256}, Config{},
			func(t *testing.T, n int) { assert.Zero(t, n%256, "payload %d", n) }},
		{"padding above peer limit", Config{PadTo: 8192}, Config{MaxPayload: 1000},
			func(t *testing.T, n int) { assert.Equal(t, 1000, n) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ccfg, scfg := tc.client, tc.server
			ccfg.Keys, scfg.Keys = []*Key{k}, []*Key{k}
			cli, srv, sent := payloadPair(t, &ccfg, &scfg)
			msg := randomBytes(t, 20_000)
			go func() {
				cli.Write(msg[:1])
				cli.Write(msg[1:])
				cli.CloseWrite()
			}()
			got, err := io.ReadAll(srv)
			require.NoError(t, err)
			assert.Equal(t, msg, got)
			payloads := sent()
			require.Greater(t, len(payloads), 2)
			for _, n := range payloads[:len(payloads)-1] { // all but close-write
				tc.check(t, n)
			}
		})
	}
}

func TestKeepalive(t *testing.T) {
	k := newTestKey(t)
	cfg := &Config{Keys: []*Key{k}}
	cli, srv := connected(t, "tcp", cfg, cfg)
	go func() {
		cli.SendKeepalive()
		cli.Write([]byte("data"))
		cli.SendKeepalive()
		cli.CloseWrite()
	}()
	got, err := io.ReadAll(srv)
	require.NoError(t, err)
	assert.Equal(t, "data", string(got))
}

func TestListenAndDial(t *testing.T) {
	k := newTestKey(t)
	ln, err := Listen("tcp", "127.0.0.1:0", &Config{Keys: []*Key{newTestKey(t), k}})
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sc := c.(*Conn)
				if sc.Handshake() != nil {
					return
				}
				io.Copy(sc, sc) // echo
				sc.CloseWrite()
			}()
		}
	}()
	ctx := context.Background()
	d := &Dialer{Config: &Config{Keys: []*Key{k}}}
	nc, err := d.DialContext(ctx, "tcp", ln.Addr().String())
	require.NoError(t, err)
	c := nc.(*Conn)
	assert.True(t, c.ConnectionState().HandshakeComplete, "DialContext returns a Conn past its handshake")
	defer c.Close()
	exchangeEcho(t, c, randomBytes(t, 300_000))

	_, err = Dial("tcp", ln.Addr().String(), &Config{Keys: []*Key{newTestKey(t)}})
	assert.ErrorIs(t, err, ErrTruncated, "a wrong key sees the server close")
	assert.ErrorContains(t, err, "wrong key or context", "the client names the likely causes")
	_, err = Dial("tcp", ln.Addr().String(), &Config{Keys: []*Key{k}, Context: "another tunnel"})
	assert.ErrorIs(t, err, ErrTruncated, "a wrong context fails as a wrong key does")
	_, err = Dial("tcp", ln.Addr().String(), &Config{})
	assert.Error(t, err, "an invalid config fails before dialing")
	_, err = Listen("tcp", "127.0.0.1:0", &Config{})
	assert.Error(t, err)
}

func exchangeEcho(t *testing.T, c *Conn, msg []byte) {
	go func() {
		c.Write(msg)
		c.CloseWrite()
	}()
	got, err := io.ReadAll(c)
	require.NoError(t, err)
	assert.Equal(t, msg, got)
}

// TestWriteTimeoutIsFatalForWriting: a Write that times out (nobody reads
// the net.Pipe) fails with a timeout, and the connection cannot write again
// since part of a frame may be gone.
func TestWriteTimeoutIsFatalForWriting(t *testing.T) {
	k := newTestKey(t)
	cfg := &Config{Keys: []*Key{k}}
	cli, _ := connected(t, "pipe", cfg, cfg)
	require.NoError(t, cli.SetWriteDeadline(time.Now().Add(30*time.Millisecond)))
	_, err := cli.Write([]byte("nobody reads this"))
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	require.NoError(t, cli.SetWriteDeadline(time.Time{}))
	_, err2 := cli.Write([]byte("again"))
	assert.ErrorIs(t, err2, os.ErrDeadlineExceeded, "the write error is sticky")
}

// TestConcurrentReadWriteClose runs a reader and a writer on each end and
// closes mid-transfer; under -race this checks the locking, and every
// goroutine must return.
func TestConcurrentReadWriteClose(t *testing.T) {
	k := newTestKey(t)
	cfg := &Config{Keys: []*Key{k}}
	cli, srv := connected(t, "tcp", cfg, cfg)
	var wg sync.WaitGroup
	for _, c := range []*Conn{cli, srv} {
		wg.Add(2)
		go func() {
			defer wg.Done()
			buf := make([]byte, 4096)
			for {
				if _, err := c.Write(buf); err != nil {
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			io.Copy(io.Discard, c)
		}()
	}
	time.Sleep(50 * time.Millisecond)
	cli.Close()
	srv.Close()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("goroutines still blocked after Close")
	}
}

// TestSteadyStateAllocatesNothing: once both ends have their buffers, a
// Write and the matching Reads on the other end allocate nothing.
func TestSteadyStateAllocatesNothing(t *testing.T) {
	k := newTestKey(t)
	for _, suite := range []aead.Suite{aead.ChaCha20Poly1305, aead.XSalsa20Poly1305} {
		cfg := &Config{Keys: []*Key{k}, Suites: []aead.Suite{suite}}
		cli, srv := connected(t, "tcp", cfg, cfg)
		wbuf, rbuf := make([]byte, 16<<10), make([]byte, 16<<10)
		roundTrip := func() {
			if _, err := cli.Write(wbuf); err != nil {
				panic(err)
			}
			if _, err := io.ReadFull(srv, rbuf); err != nil {
				panic(err)
			}
		}
		roundTrip() // allocate both ends' buffers
		assert.Zero(t, testing.AllocsPerRun(50, roundTrip), suite.String())
	}
}

// TestPaddingHidesFrameTypes: with padding on, a short write, a keepalive
// and the authenticated end of the stream are frames of the same size on
// the wire, so an observer cannot tell where the stream ends.
func TestPaddingHidesFrameTypes(t *testing.T) {
	k := newTestKey(t)
	cfg := &Config{Keys: []*Key{k}, PadTo: 256}
	cli, srv, sent := payloadPair(t, cfg, cfg)
	go func() {
		cli.Write([]byte("x"))
		cli.SendKeepalive()
		cli.Write(make([]byte, 255))
		cli.CloseWrite()
	}()
	got, err := io.ReadAll(srv)
	require.NoError(t, err)
	assert.Len(t, got, 256)
	assert.Equal(t, []int{256, 256, 256, 256}, sent(), "data, keepalive, data, close-write")
}
