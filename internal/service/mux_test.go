package service_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/service"
	"github.com/spipe-dev/spipe/internal/testutil/pipetest"
)

// muxPair starts a listen and a connect --mux in front of it, both
// tweaked by tweak, and waits for the carrier.
func muxPair(t *testing.T, target, key string, tweak func(*service.Options)) (listen, connect *pipetest.Service) {
	t.Helper()
	listen = pipetest.Start(t, service.Listen, "127.0.0.1:0", target, key, tweak)
	return listen, pipetest.MuxConnect(t, listen.Addr, key, tweak)
}

// TestMuxEcho: connections through connect --mux reach the target and
// come back intact, all as streams of one carrier, and both ends count
// them as connections and the carrier as a carrier.
func TestMuxEcho(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	listen, connect := muxPair(t, tg.Addr, key, pipetest.WithMetrics)
	for _, n := range []int{0, 1, 100_000, 3 << 20} {
		msg := pipetest.RandomBytes(n)
		got := pipetest.RoundTrip(t, pipetest.Dial(t, connect.Addr), msg)
		assert.True(t, bytes.Equal(msg, got), "%d bytes: echo differs (got %d bytes)", n, len(got))
	}
	assert.Equal(t, int32(4), tg.Accepts.Load())
	for _, s := range []*pipetest.Service{listen, connect} {
		mode := s.Svc.MetricsAddr()
		require.NotNil(t, mode)
		require.Eventually(t, func() bool {
			body := pipetest.Scrape(t, mode.String())
			m := func(name string) float64 {
				for _, l := range []string{"listen", "connect"} {
					if v := pipetest.Metric(body, name+`{mode="`+l+`"}`); v >= 0 {
						return v
					}
				}
				return -1
			}
			return m("spipe_carriers_open") == 1 && m("spipe_carriers_total") == 1 &&
				m("spipe_connections_open") == 0 && m("spipe_connections_total") >= 4
		}, 10*time.Second, 20*time.Millisecond, "metrics of %s", s.Addr)
	}
	assert.Equal(t, 1, listen.Log.Count(`msg="carrier opened"`), "one carrier carried every connection")
}

// TestMuxHalfClose: the target answers only after the client's EOF
// reached it through the stream, and the client sees EOF only after the
// target half-closed: both directions of a stream end on their own.
func TestMuxHalfClose(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := pipetest.NewTarget(t, func(c net.Conn) {
		h := sha256.New()
		n, _ := io.Copy(h, c)
		c.Write([]byte("got " + strconv.FormatInt(n, 10) + " bytes, sha256 "))
		c.Write([]byte(hex.EncodeToString(h.Sum(nil))))
		c.(*net.TCPConn).CloseWrite()
		io.Copy(io.Discard, c)
	})
	_, connect := muxPair(t, tg.Addr, key, nil)
	msg := pipetest.RandomBytes(777_777)
	sum := sha256.Sum256(msg)
	got := pipetest.RoundTrip(t, pipetest.Dial(t, connect.Addr), msg)
	assert.Equal(t, "got 777777 bytes, sha256 "+hex.EncodeToString(sum[:]), string(got))
}

// TestMuxResetEndToEnd: a reset on either plaintext side reaches the
// other as a reset, never a clean end, and leaves the carrier and its
// other streams alone.
func TestMuxResetEndToEnd(t *testing.T) {
	key := pipetest.KeyFile(t)
	targetSide := make(chan *net.TCPConn, 4)
	targetErr := make(chan error, 4)
	tg := pipetest.NewTarget(t, func(c net.Conn) {
		tc := c.(*net.TCPConn)
		buf := make([]byte, 5)
		if _, err := io.ReadFull(tc, buf); err != nil {
			return
		}
		if string(buf) == "reset" {
			tc.SetLinger(0) // the target aborts
			return
		}
		if string(buf) == "abort" {
			targetSide <- tc
			_, err := io.Copy(io.Discard, tc)
			targetErr <- err
			return
		}
		tc.Write(buf)
		io.Copy(tc, tc)
		tc.CloseWrite()
	})
	listen, connect := muxPair(t, tg.Addr, key, nil)
	bystander := pipetest.Dial(t, connect.Addr)
	_, err := bystander.Write([]byte("echo!"))
	require.NoError(t, err)
	pipetest.RequireAnswer(t, bystander, "echo!", "bystander")

	// The target resets: the client gets a reset.
	c := pipetest.Dial(t, connect.Addr)
	_, err = c.Write([]byte("reset"))
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err = io.ReadAll(c)
	assert.ErrorIs(t, err, syscall.ECONNRESET, "the target's reset reached the client")

	// The client resets: the target gets a reset.
	c = pipetest.Dial(t, connect.Addr)
	_, err = c.Write([]byte("abort"))
	require.NoError(t, err)
	<-targetSide
	c.SetLinger(0)
	c.Close()
	select {
	case err := <-targetErr:
		assert.ErrorIs(t, err, syscall.ECONNRESET, "the client's reset reached the target")
	case <-time.After(10 * time.Second):
		t.Fatal("the target never saw the client's reset")
	}

	// The bystander never noticed, and the one carrier is still the only.
	_, err = bystander.Write([]byte("still"))
	require.NoError(t, err)
	pipetest.RequireAnswer(t, bystander, "still", "bystander after the resets")
	assert.Equal(t, 1, listen.Log.Count(`msg="carrier opened"`))
}

// cutter relays TCP connections to a target and can reset all of them at
// once, standing for a network that cuts the carrier.
type cutter struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []*net.TCPConn
}

func startCutter(t *testing.T, target string) *cutter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	c := &cutter{ln: ln, target: target}
	t.Cleanup(func() { ln.Close(); c.cut() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			c.mu.Lock()
			c.conns = append(c.conns, in.(*net.TCPConn), out.(*net.TCPConn))
			c.mu.Unlock()
			go func() { io.Copy(out, in); out.(*net.TCPConn).CloseWrite() }()
			go func() { io.Copy(in, out); in.(*net.TCPConn).CloseWrite() }()
		}
	}()
	return c
}

func (c *cutter) addr() string { return c.ln.Addr().String() }

// cut resets every relayed connection.
func (c *cutter) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, tc := range c.conns {
		tc.SetLinger(0)
		tc.Close()
	}
	c.conns = nil
}

// TestMuxCarrierDeath: when the carrier is cut, every connection it
// carried is reset at both plaintext ends (never a clean end), and the
// next connection opens on a new carrier.
func TestMuxCarrierDeath(t *testing.T) {
	key := pipetest.KeyFile(t)
	targetEnds := make(chan error, 8)
	tg := pipetest.NewTarget(t, func(c net.Conn) {
		buf := make([]byte, 4)
		if _, err := io.ReadFull(c, buf); err != nil {
			return
		}
		c.Write(buf)
		_, err := io.Copy(io.Discard, c)
		targetEnds <- err
	})
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, nil)
	relay := startCutter(t, listen.Addr)
	connect := pipetest.MuxConnect(t, relay.addr(), key, nil)
	var clients []*net.TCPConn
	for range 3 {
		c := pipetest.Dial(t, connect.Addr)
		_, err := c.Write([]byte("ping"))
		require.NoError(t, err)
		pipetest.RequireAnswer(t, c, "ping", "before the cut")
		clients = append(clients, c)
	}
	relay.cut()
	for i, c := range clients {
		require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
		_, err := io.ReadAll(c)
		assert.ErrorIs(t, err, syscall.ECONNRESET, "client %d", i)
	}
	for i := range clients {
		select {
		case err := <-targetEnds:
			assert.ErrorIs(t, err, syscall.ECONNRESET, "target side %d", i)
		case <-time.After(10 * time.Second):
			t.Fatalf("target side %d never ended", i)
		}
	}
	connect.Log.Wait(t, `msg="carrier lost; its streams were reset, opening another"`, nil)
	c := pipetest.Dial(t, connect.Addr)
	_, err := c.Write([]byte("pong"))
	require.NoError(t, err)
	pipetest.RequireAnswer(t, c, "pong", "a connection after the cut")
	assert.Equal(t, 2, connect.Log.Count(`msg="carrier open"`))
}

// TestMuxMaxConnsCountsStreams: the listener's --max-conns counts
// streams: with one place, a second stream of the same carrier waits
// until the first ends.
func TestMuxMaxConnsCountsStreams(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, func(o *service.Options) { o.MaxConns = 1 })
	connect := pipetest.MuxConnect(t, listen.Addr, key, nil)
	first := pipetest.Dial(t, connect.Addr)
	_, err := first.Write([]byte("1"))
	require.NoError(t, err)
	pipetest.RequireAnswer(t, first, "1", "first stream not served")
	second := pipetest.Dial(t, connect.Addr)
	_, err = second.Write([]byte("2"))
	require.NoError(t, err)
	listen.Log.Wait(t, `level=WARN msg="connection limit reached; new connections wait for a place, and are reset if none comes free in time" max_conns=1 max_wait=10s`, nil)
	pipetest.RequireNoAnswer(t, second, "second stream served while the first held the only place")
	first.Close()
	pipetest.RequireAnswer(t, second, "2", "second stream not served after the first ended")
}

// TestMuxIdleTimeout: --idle-timeout applies to each stream: an idle one
// is reset, and the carrier keeps carrying others.
func TestMuxIdleTimeout(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, func(o *service.Options) {
		o.IdleTimeout = 400 * time.Millisecond
	})
	connect := pipetest.MuxConnect(t, listen.Addr, key, nil)
	c := pipetest.Dial(t, connect.Addr)
	_, err := c.Write([]byte("x"))
	require.NoError(t, err)
	pipetest.RequireAnswer(t, c, "x", "before idling")
	start := time.Now()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err = c.Read(make([]byte, 1))
	assert.ErrorIs(t, err, syscall.ECONNRESET, "idle stream not reset")
	assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
	listen.Log.Wait(t, `stage=transfer reason=idle`, nil)
	got := pipetest.RoundTrip(t, pipetest.Dial(t, connect.Addr), []byte("after"))
	assert.Equal(t, "after", string(got))
	assert.Equal(t, 1, connect.Log.Count(`msg="carrier open"`), "the carrier outlived its idle stream")
}

// TestMuxAndPlainOnOnePort: one listener serves a plain connect and a
// multiplexed one at once.
func TestMuxAndPlainOnOnePort(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	listen, muxed := muxPair(t, tg.Addr, key, nil)
	plain := pipetest.Start(t, service.Connect, "127.0.0.1:0", listen.Addr, key, nil)
	for _, addr := range []string{muxed.Addr, plain.Addr, muxed.Addr} {
		got := pipetest.RoundTrip(t, pipetest.Dial(t, addr), []byte("both kinds"))
		assert.Equal(t, "both kinds", string(got))
	}
	listen.Log.Wait(t, `msg="connection closed" .* mux=true`, nil)
}

// TestMuxStdio: connect --mux without -s carries its stdin/stdout as one
// stream, and ends cleanly when it does.
func TestMuxStdio(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, nil)
	msg := pipetest.RandomBytes(1 << 20)
	var out bytes.Buffer
	c := pipetest.Start(t, service.Connect, "", listen.Addr, key, func(o *service.Options) {
		o.Stdin = io.NopCloser(bytes.NewReader(msg))
		o.Stdout = nopWriteCloser{&out}
		o.Mux = true
	})
	require.NoError(t, c.Wait(t, 30*time.Second))
	assert.True(t, bytes.Equal(msg, out.Bytes()), "stdout differs from stdin (%d of %d bytes)", out.Len(), len(msg))
	listen.Log.Wait(t, `msg="connection closed" .* end=closed`, nil)
	listen.Log.Wait(t, `msg="carrier closed"`, nil)
}

// TestMuxShutdownDrains: a listener shutting down lets the stream in
// flight finish, resets none, and closes the carrier once it is idle;
// connect then opens another carrier when the listener is back.
func TestMuxShutdownDrains(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg, release := pipetest.HeldEchoTarget(t)
	listen, connect := muxPair(t, tg.Addr, key, func(o *service.Options) { o.ShutdownTimeout = 20 * time.Second })
	tr := pipetest.StartTransfer(t, connect.Addr, tg, 2<<20)
	listen.Shutdown()
	listen.Log.Wait(t, `msg="shutting down: waiting for open connections" open=1`, nil)
	release()
	assert.True(t, bytes.Equal(tr.Sent, <-tr.Got), "transfer in flight not completed intact")
	assert.NoError(t, listen.Wait(t, 10*time.Second))
	listen.Log.Wait(t, `msg="carrier closed"`, nil)
	connect.Log.Wait(t, `msg="carrier going away \(the listener is shutting down, or no longer takes its key\); opening another"`, nil)
}

// TestMuxCarrierLimit: a listener keeps at most --max-pending carriers
// open (a carrier holds no --max-conns place itself), so key holders
// cannot pile up idle carriers without bound. One beyond it is closed at
// once, with one warning; its client retries after a growing pause, not
// in a tight loop, and the carrier already open is not disturbed.
func TestMuxCarrierLimit(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	listen, first := muxPair(t, tg.Addr, key, func(o *service.Options) { o.MaxPending = 1 })
	second := pipetest.Start(t, service.Connect, "127.0.0.1:0", listen.Addr, key, func(o *service.Options) { o.Mux = true })
	listen.Log.Wait(t, `level=WARN msg="carrier limit reached; new multiplexed connections are closed" max_carriers=1`, nil)
	// Closed right after its handshake: its client sees the close, or the
	// go-away the close sends, whichever it reads first.
	second.Log.Wait(t, `msg="carrier (going away \(the listener is shutting down, or no longer takes its key\)|closed by the listener); opening another"`, nil)
	time.Sleep(500 * time.Millisecond)
	assert.Less(t, second.Log.Count(`msg="carrier open"`), 6, "the refused client retried in a tight loop:\n%s", second.Log.String())
	got := pipetest.RoundTrip(t, pipetest.Dial(t, first.Addr), []byte("the first carrier"))
	assert.Equal(t, "the first carrier", string(got))
}

// TestMuxCarrierThatCannotOpen: a connect --mux whose carriers cannot
// open (the listener refuses its key, or is not there) counts each
// carrier's failure apart, by stage and reason: a carrier is not a
// connection. Its one local connection, which found no carrier, is one
// dial failure, with a reason the README lists (the last carrier's dial
// failure, as a plain connect's; or no_carrier), so that the ends and
// failures add up to the connections; and no connection's handshake
// failed.
func TestMuxCarrierThatCannotOpen(t *testing.T) {
	key, other := pipetest.KeyFile(t), pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, nil)
	for _, tc := range []struct {
		name, target, dial, carrier string
	}{
		{"wrong key", listen.Addr, "dial:no_carrier", "carrier_open:handshake:truncated"},
		{"no listener", pipetest.FreeAddr(t), "dial:refused", "carrier_open:dial:refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			connect := pipetest.Start(t, service.Connect, "127.0.0.1:0", tc.target, other, func(o *service.Options) {
				pipetest.WithMetrics(o)
				o.Mux = true
				o.HandshakeTimeout = time.Second
			})
			assert.Error(t, pipetest.TryEcho(connect.Addr, "x"))
			_, failures := waitOutcomes(t, connect, 1)
			assert.Equal(t, 1.0, failures[tc.dial], "%v", failures)
			assert.Positive(t, failures[tc.carrier], "%v", failures)
			for k := range failures {
				assert.Contains(t, []string{tc.dial, tc.carrier}, k, "%v", failures)
			}
			assert.Equal(t, 1.0, connect.Metric(t, `spipe_connections_total{mode="connect"}`))
			connect.Log.Wait(t, `level=WARN msg="connection failed" peer=\S+ stage=dial reason=`+strings.TrimPrefix(tc.dial, "dial:"), nil)
		})
	}
}
