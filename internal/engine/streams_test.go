package engine

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/pkg/spipe"
	"github.com/spipe-dev/spipe/pkg/spipe/mux"
)

// The listening side of the multiplexed mode, with real carriers: a key
// holder's session against a Forwarder shaped like "spipe listen".

// muxConfig is testConfig with the multiplexed mode on.
func muxConfig(t *testing.T) *spipe.Config {
	cfg := testConfig(t)
	cfg.Multiplex = true
	return cfg
}

// muxListen serves a listening Forwarder, whose clients may run the
// multiplexed mode, forwarding to target and reporting to obs and a log
// it returns; tweak, if not nil, adjusts it.
func muxListen(t *testing.T, target string, obs Observer, tweak func(*Forwarder)) (string, *testutil.Log) {
	t.Helper()
	cfg := muxConfig(t)
	log := &testutil.Log{}
	f := &Forwarder{
		SecureSide: SecureInbound,
		Secure: func(ctx context.Context, c net.Conn) (Conn, error) {
			sc := spipe.Server(c, cfg)
			if err := sc.HandshakeContext(ctx); err != nil {
				return nil, err
			}
			if !sc.ConnectionState().Multiplexed {
				return sc, nil
			}
			s, err := mux.Server(sc, nil)
			if err != nil {
				return nil, err
			}
			return &Secured{Carrier: s}, nil
		},
		Dial:             (&TargetDialer{Target: Addr{Network: "tcp", Address: target}}).Dial,
		HandshakeTimeout: 5 * time.Second,
		Observer:         obs,
		Log:              slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if tweak != nil {
		tweak(f)
	}
	return serveWith(t, f), log
}

// muxCarrier opens a carrier to addr as a key holder; raw is its socket.
func muxCarrier(t *testing.T, addr string) (s *mux.Session, raw net.Conn) {
	t.Helper()
	raw, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { raw.Close() })
	s, err = mux.Client(spipe.Client(raw, muxConfig(t)), nil)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s, raw
}

// openWith opens a stream on s whose first data is msg.
func openWith(t *testing.T, s *mux.Session, msg string) *mux.Stream {
	t.Helper()
	c, err := s.Open(context.Background())
	require.NoError(t, err)
	_, err = c.Write([]byte(msg))
	require.NoError(t, err)
	return c.(*mux.Stream)
}

// heldTarget hands every connection it accepts to the test, keyed by
// the first byte it read from it; the test's cleanup releases those it
// still holds.
func heldTarget(t *testing.T) (addr string, conns <-chan heldConn) {
	ch := make(chan heldConn, 64)
	quit := make(chan struct{})
	addr = serveTCP(t, func(c net.Conn) {
		b := make([]byte, 1)
		if _, err := io.ReadFull(c, b); err != nil {
			return
		}
		done := make(chan struct{})
		ch <- heldConn{Conn: c, first: b[0], release: sync.OnceFunc(func() { close(done) })}
		select {
		case <-done:
		case <-quit:
		}
	})
	t.Cleanup(func() { close(quit) })
	return addr, ch
}

// heldConn is a target connection the test holds; release (once or
// more) lets its server return, which closes it.
type heldConn struct {
	net.Conn
	first   byte
	release func()
}

// nextHeld returns the next target connection.
func nextHeld(t *testing.T, conns <-chan heldConn) heldConn {
	t.Helper()
	select {
	case c := <-conns:
		t.Cleanup(c.release)
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no target connection")
		return heldConn{}
	}
}

// noneHeld checks that no target connection comes within a moment.
func noneHeld(t *testing.T, conns <-chan heldConn, why string) {
	t.Helper()
	select {
	case c := <-conns:
		c.release()
		t.Errorf("%s: stream %q was dialled", why, c.first)
	case <-time.After(100 * time.Millisecond):
	}
}

// TestStreamAllowanceChargesSilentTargets: each stream holds a token of
// its carrier's allowance from before its dial; one whose target never
// sends a byte keeps it spent, whether its client resets it or
// half-closes it; one whose target answers gives it back, and the
// carrier's next stream, waiting meanwhile (and counted as waiting), is
// dialled then. So a key holder that opens streams in batches and ends
// them before their target says anything gets no more target
// connections than the allowance holds.
func TestStreamAllowanceChargesSilentTargets(t *testing.T) {
	target, conns := heldTarget(t)
	obs := newOutcomes()
	addr, _ := muxListen(t, target, obs, func(f *Forwarder) {
		f.MaxConnsWait = time.Minute
		f.streamAllowance = func() *allowance { return frozenAllowance(3) }
	})
	s, _ := muxCarrier(t, addr)
	streams := map[byte]*mux.Stream{}
	held := map[byte]heldConn{}
	for _, id := range "abc" {
		streams[byte(id)] = openWith(t, s, string(id))
		c := nextHeld(t, conns)
		held[c.first] = c
	}
	require.Len(t, held, 3)
	streams['d'] = openWith(t, s, "d")
	require.Eventually(t, func() bool { return obs.waiters() == 1 }, 10*time.Second, time.Millisecond,
		"the fourth stream waits for the allowance")
	noneHeld(t, conns, "three tokens, three streams unanswered")

	// Reset by its client before its target said anything: charged.
	require.NoError(t, streams['a'].Reset())
	require.Eventually(t, func() bool { return obs.snapshot()["end:reset"] == 1 }, 10*time.Second, time.Millisecond)
	noneHeld(t, conns, "after a stream reset before its target answered")

	// Half-closed, and the target closes without a word: charged too.
	require.NoError(t, streams['b'].CloseWrite())
	_, err := io.ReadAll(held['b'])
	require.NoError(t, err)
	held['b'].release()
	_, err = io.ReadAll(streams['b'])
	require.NoError(t, err)
	require.Eventually(t, func() bool { return obs.snapshot()["end:closed"] == 1 }, 10*time.Second, time.Millisecond)
	noneHeld(t, conns, "after a stream half-closed before its target answered")
	assert.Equal(t, 1, obs.waiters())

	// A target that answers gives its stream's token back: the waiting
	// stream is dialled.
	_, err = held['c'].Write([]byte("C"))
	require.NoError(t, err)
	got := make([]byte, 1)
	_, err = io.ReadFull(streams['c'], got)
	require.NoError(t, err)
	assert.Equal(t, "C", string(got))
	assert.Equal(t, byte('d'), nextHeld(t, conns).first)
	assert.Zero(t, obs.waiters())
}

// TestStreamDialFailureGivesTheTokenBack: a stream whose dial fails made
// no target connection: its token comes back, and the next stream does
// not wait for the refill (which never comes here).
func TestStreamDialFailureGivesTheTokenBack(t *testing.T) {
	obs := newOutcomes()
	addr, _ := muxListen(t, freeAddr(t), obs, func(f *Forwarder) {
		f.MaxConnsWait = time.Minute
		f.streamAllowance = func() *allowance { return frozenAllowance(1) }
	})
	s, _ := muxCarrier(t, addr)
	for i := range 3 {
		openWith(t, s, "x")
		require.Eventually(t, func() bool { return obs.snapshot()["dial:refused"] == i+1 }, 10*time.Second, time.Millisecond,
			"stream %d", i+1)
	}
}

// TestStreamEndedBeforeDialIsAnEnd: a stream its client resets while it
// waits for a place, or whose carrier dies meanwhile, is never dialled
// and is an end (reset), as it would be once dialled: not an admission
// failure, and no warning. The carrier's failure is counted once, as
// the carrier's.
func TestStreamEndedBeforeDialIsAnEnd(t *testing.T) {
	target := echoServer(t)
	obs := newOutcomes()
	addr, log := muxListen(t, target, obs, func(f *Forwarder) {
		f.MaxConns = 1
		f.MaxConnsWait = time.Minute
	})
	s, raw := muxCarrier(t, addr)
	holder := openWith(t, s, "hold")
	got := make([]byte, 4)
	_, err := io.ReadFull(holder, got)
	require.NoError(t, err, "the stream holding the one place")

	var waiting []*mux.Stream
	for range 3 {
		waiting = append(waiting, openWith(t, s, "x"))
	}
	require.Eventually(t, func() bool { return obs.waiters() == 3 }, 10*time.Second, time.Millisecond)
	for _, st := range waiting {
		require.NoError(t, st.Reset())
	}
	require.Eventually(t, func() bool { return obs.snapshot()["end:reset"] == 3 }, 10*time.Second, time.Millisecond)
	assert.Zero(t, obs.waiters())

	for range 2 {
		openWith(t, s, "y")
	}
	require.Eventually(t, func() bool { return obs.waiters() == 2 }, 10*time.Second, time.Millisecond)
	require.NoError(t, raw.Close()) // the carrier dies with its client
	require.Eventually(t, func() bool {
		o := obs.snapshot()
		return o["end:reset"] == 5 && o["transfer:carrier"] == 1
	}, 10*time.Second, time.Millisecond, "%v", obs.snapshot())
	failures := 0
	for k, n := range obs.snapshot() {
		assert.False(t, strings.HasPrefix(k, "admission:"), "a stream that ended before its dial counted as %s", k)
		if strings.HasPrefix(k, "carrier:") {
			failures += n
		}
	}
	assert.Equal(t, 1, failures, "the carrier's failure, once: %v", obs.snapshot())
	assert.Zero(t, log.Count("level=WARN", `msg="connection failed"`), "%s", log)
}

// closedCarriers counts carriers that have ended, after their last line.
type closedCarriers struct {
	nopObserver
	n atomic.Int32
}

func (c *closedCarriers) CarrierClosed() { c.n.Add(1) }

// TestCarrierFailedLinesRateLimited: "carrier failed" lines from one
// source are limited as the failure lines of connections are.
func TestCarrierFailedLinesRateLimited(t *testing.T) {
	obs := &closedCarriers{}
	addr, log := muxListen(t, echoServer(t), obs, nil)
	const carriers = failureLineBurst + 3
	for range carriers {
		s, raw := muxCarrier(t, addr)
		// An echo through it first: the listener has then taken it as a
		// carrier. Closed as soon as the client's handshake is through,
		// it could still fail the listener's (then it is no carrier).
		st := openWith(t, s, "x")
		_, err := io.ReadFull(st, make([]byte, 1))
		require.NoError(t, err)
		require.NoError(t, raw.Close())
	}
	require.Eventually(t, func() bool { return obs.n.Load() == carriers }, 10*time.Second, time.Millisecond)
	assert.Equal(t, failureLineBurst, log.Count(`msg="carrier failed"`), "%s", log)
}

// endedCarriers is outcomes that also counts carriers served to their end.
type endedCarriers struct {
	*outcomes
	closed atomic.Int32
}

func (e *endedCarriers) CarrierClosed() { e.closed.Add(1) }

// TestCarrierEndedBeforeItsHandshakeReturned: a carrier's session reads
// from the moment Secure starts it, so a peer's first frames can end it
// (and close its socket) before the handshake's caller has cleared the
// socket's deadline. That carrier is served and reported as a carrier
// (here a clean close: no failure at all), not as a handshake that
// failed on a closed socket. Secure below waits for the carrier's end to
// make that order certain; on a loaded machine it happened by itself.
func TestCarrierEndedBeforeItsHandshakeReturned(t *testing.T) {
	obs := &endedCarriers{outcomes: newOutcomes()}
	addr, log := muxListen(t, echoServer(t), obs, func(f *Forwarder) {
		secure := f.Secure
		f.Secure = func(ctx context.Context, c net.Conn) (Conn, error) {
			sc, err := secure(ctx, c)
			if s, ok := sc.(*Secured); ok && s.Carrier != nil {
				select {
				case <-s.Carrier.Done():
				case <-time.After(10 * time.Second):
				}
			}
			return sc, err
		}
	})
	s, _ := muxCarrier(t, addr)
	require.NoError(t, s.Close())
	require.Eventually(t, func() bool { return obs.closed.Load() == 1 }, 10*time.Second, time.Millisecond,
		"the carrier was never served: %v\n%s", obs.snapshot(), log)
	assert.Empty(t, obs.snapshot(), "a carrier closed on purpose is no failure")
	assert.Zero(t, log.Count("level=WARN"), "%s", log)
}
