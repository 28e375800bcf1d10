package engine

import (
	"context"
	"fmt"
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

// failures is an Observer that counts handshake and dial failures by
// reason.
type failures struct {
	nopObserver
	mu        sync.Mutex
	handshake map[string]int
	dial      map[string]int
}

func newFailures() *failures {
	return &failures{handshake: map[string]int{}, dial: map[string]int{}}
}

func (f *failures) Handshake(_ time.Duration, err error) {
	if err != nil {
		f.mu.Lock()
		f.handshake[Reason(err)]++
		f.mu.Unlock()
	}
}

func (f *failures) DialError(err error) {
	f.mu.Lock()
	f.dial[Reason(err)]++
	f.mu.Unlock()
}

func (f *failures) count(m map[string]int, reason string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return m[reason]
}

// spipeListen serves a forwarder shaped like "spipe listen" (the spipe
// server handshake with cfg, then the target), logging into the returned
// log at every level.
func spipeListen(t *testing.T, target string, cfg *spipe.Config, tweak func(*Forwarder)) (string, *testutil.Log) {
	t.Helper()
	log := &testutil.Log{}
	f := &Forwarder{
		SecureSide: SecureInbound,
		Secure: func(ctx context.Context, c net.Conn) (Conn, error) {
			sc := spipe.Server(c, cfg)
			if err := sc.HandshakeContext(ctx); err != nil {
				return nil, err
			}
			st := sc.ConnectionState()
			return &Secured{Conn: sc, Session: Session{Key: "fp" + cfg.Keys[st.KeyIndex].Fingerprint()[:4],
				Suite: st.Suite.String(), ForwardSecrecy: st.ForwardSecrecy}}, nil
		},
		Dial:             (&TargetDialer{Target: Addr{Network: "tcp", Address: target}}).Dial,
		HandshakeTimeout: 5 * time.Second,
		Log:              slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if tweak != nil {
		tweak(f)
	}
	return serveWith(t, f), log
}

// dialSpipe makes a client connection with cfg and echoes msg through it.
func dialSpipe(t *testing.T, addr string, cfg *spipe.Config, msg string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := (&spipe.Dialer{Config: cfg}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	c := nc.(*spipe.Conn)
	defer c.Close()
	if _, err := c.Write([]byte(msg)); err != nil {
		return err
	}
	c.CloseWrite()
	got, err := io.ReadAll(c)
	if err == nil && string(got) != msg {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// keyHolderEcho connects to addr as a spipe client with cfg and echoes
// msg through the connection, then returns the socket under it, for the
// test to end it as it studies: with a reset, or a close without the
// protocol's end (all was read, so a close sends a FIN, not a reset).
func keyHolderEcho(t *testing.T, addr string, cfg *spipe.Config, msg string) *net.TCPConn {
	t.Helper()
	raw, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { raw.Close() })
	sc := spipe.Client(raw, cfg)
	require.NoError(t, sc.Handshake())
	_, err = sc.Write([]byte(msg))
	require.NoError(t, err)
	_, err = io.ReadFull(sc, make([]byte, len(msg)))
	require.NoError(t, err)
	return raw.(*net.TCPConn)
}

// TestFailureLevels: what an operator should look at is a warning; the
// closes a busy listener sees all day are not.
func TestFailureLevels(t *testing.T) {
	cfg := testConfig(t)
	other, err := spipe.NewKey([]byte(strings.Repeat("x", 32)))
	require.NoError(t, err)
	addr, log := spipeListen(t, echoServer(t), cfg, nil)

	// A load balancer's health check: connect, close.
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	c.Close()
	log.Wait(t, `level=DEBUG msg="connection failed" peer=127\.0\.0\.1:\d+ stage=handshake reason=truncated`, nil)

	// A client with another key.
	assert.Error(t, dialSpipe(t, addr, &spipe.Config{Keys: []*spipe.Key{other}, ForwardSecrecy: spipe.ForwardSecrecyOff}, "x"))
	log.Wait(t, `level=WARN msg="connection failed" peer=127\.0\.0\.1:\d+ stage=handshake reason=auth`, nil)

	// A client that proved the key, then aborted mid-stream: its reset is
	// how it ended, not a failure.
	raw := keyHolderEcho(t, addr, cfg, "partial")
	raw.SetLinger(0)
	raw.Close()
	log.Wait(t, `level=DEBUG msg="connection closed" peer=\S+ key=fp\w{4} suite=chacha20-poly1305 pfs=false bytes_to_target=7 bytes_from_target=\d+ duration=\S+ end=reset err=.*`, nil)

	// A client that proved the key, then went away without the
	// protocol's end: the stream may have been cut.
	keyHolderEcho(t, addr, cfg, "partial").Close()
	log.Wait(t, `level=INFO msg="connection failed" peer=\S+ stage=transfer reason=truncated err=.* key=fp\w{4} suite=chacha20-poly1305 pfs=false`, nil)

	// A target that refuses: the operator must look.
	refusing, log2 := spipeListen(t, freeAddr(t), cfg, nil)
	assert.Error(t, dialSpipe(t, refusing, cfg, "x"))
	log2.Wait(t, `level=WARN msg="connection failed" peer=\S+ stage=dial reason=refused err=.* key=fp\w{4} suite=chacha20-poly1305 pfs=false`, nil)
}

func TestFailureLevelTable(t *testing.T) {
	in := &Forwarder{SecureSide: SecureInbound}
	out := &Forwarder{SecureSide: SecureOutbound}
	for _, tc := range []struct {
		f             *Forwarder
		stage, reason string
		want          slog.Level
	}{
		{in, stageHandshake, "truncated", slog.LevelDebug},
		{in, stageHandshake, "reset", slog.LevelDebug},
		{in, stageHandshake, "eof", slog.LevelDebug},
		{in, stageHandshake, "evicted", slog.LevelDebug},
		{in, stageHandshake, "hello_timeout", slog.LevelDebug},
		{in, stageHandshake, "timeout", slog.LevelInfo},
		{in, stageHandshake, "auth", slog.LevelWarn},
		{in, stageHandshake, "version", slog.LevelWarn},
		{in, stageHandshake, "pfs_required", slog.LevelWarn},
		{out, stageHandshake, "truncated", slog.LevelWarn}, // the server refused us
		{out, stageHandshake, "timeout", slog.LevelWarn},
		{in, stageDial, "refused", slog.LevelWarn},
		{in, stageDial, "dns", slog.LevelWarn},
		{out, stageDial, "refused", slog.LevelWarn},
		{in, stageAdmission, "limit", slog.LevelWarn},
		{out, stageAdmission, "limit", slog.LevelWarn},
		{in, stageAdmission, "carrier_limit", slog.LevelWarn},
		{in, stageTransfer, "tampered", slog.LevelWarn},
		{in, stageTransfer, "frame_too_large", slog.LevelWarn},
		{in, stageTransfer, "truncated", slog.LevelInfo},
		{in, stageTransfer, "idle", slog.LevelInfo},
		{in, stageTransfer, "carrier", slog.LevelInfo},
		{in, stageTransfer, "other", slog.LevelWarn},
		{in, stageCarrier, "reset", slog.LevelInfo},
		{in, stageCarrier, "mux_protocol", slog.LevelWarn},
		{out, stageCarrier, "reset", slog.LevelWarn},
	} {
		assert.Equal(t, tc.want, tc.f.failureLevel(tc.stage, tc.reason), "%v %s %s", tc.f.SecureSide, tc.stage, tc.reason)
	}
}

// TestHandshakeLinesRateLimited: a burst of failing handshakes from one
// address is counted in full but logged only up to the limit.
func TestHandshakeLinesRateLimited(t *testing.T) {
	cfg := testConfig(t)
	obs := newFailures()
	addr, log := spipeListen(t, echoServer(t), cfg, func(f *Forwarder) { f.Observer = obs })
	const n = 3 * failureLineBurst
	for range n {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		c.Write([]byte{0x42}) // another protocol version
		io.Copy(io.Discard, c)
		c.Close()
	}
	require.Eventually(t, func() bool { return obs.count(obs.handshake, "version") == n }, 10*time.Second, 10*time.Millisecond)
	assertLimitedLines(t, log, `msg="connection failed"`, "stage=handshake")
}

// assertLimitedLines asserts that the log holds failureLineBurst lines
// with subs, once the failures behind them have been counted. A failure
// is counted before its line is written, so the lines the limit let
// through may still be on their way: they are awaited, and then a moment
// is left for a line the limit should have held back.
func assertLimitedLines(t *testing.T, log *testutil.Log, subs ...string) {
	t.Helper()
	assert.Eventually(t, func() bool { return log.Count(subs...) >= failureLineBurst }, 10*time.Second, 10*time.Millisecond, log.String())
	time.Sleep(50 * time.Millisecond)
	assert.Equal(t, failureLineBurst, log.Count(subs...), log.String())
}

// TestTransferLinesRateLimited: transfer failures are limited per source
// as handshake failures are (a burst of 20,000 failing connections once
// wrote 12,261 lines), counted in full, and the line after a held-back
// run says how many it held back.
func TestTransferLinesRateLimited(t *testing.T) {
	cfg := testConfig(t)
	obs := newOutcomes()
	var later atomic.Int64 // how far the limiter's clock is moved on
	addr, log := spipeListen(t, echoServer(t), cfg, func(f *Forwarder) {
		f.Observer = obs
		f.failureLines().now = func() time.Time { return time.Now().Add(time.Duration(later.Load())) }
	})
	// Key holders that cut their stream without the protocol's end.
	truncate := func() { keyHolderEcho(t, addr, cfg, "x").Close() }
	const n = 3 * failureLineBurst
	for range n {
		truncate()
	}
	require.True(t, settle(func() bool { return obs.snapshot()["transfer:truncated"] == n }), "%v", obs.snapshot())
	assertLimitedLines(t, log, `msg="connection failed"`, "stage=transfer")

	later.Store(int64(failureLineWindow)) // a new window: its first line counts the held-back ones
	truncate()
	log.Wait(t, fmt.Sprintf(`msg="connection failed" .*stage=transfer reason=truncated .*suppressed=%d`, n-failureLineBurst), nil)
}

func TestLineLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newLineLimiter(2, time.Minute, 3)
	l.now = func() time.Time { return now }
	allow := func(src string) (bool, int) { return l.allow(src) }

	for range 2 {
		ok, n := allow("a")
		assert.True(t, ok)
		assert.Zero(t, n)
	}
	for range 4 {
		ok, _ := allow("a")
		assert.False(t, ok, "beyond the burst")
	}
	ok, _ := allow("b")
	assert.True(t, ok, "sources are limited apart")

	now = now.Add(time.Minute)
	ok, n := allow("a")
	assert.True(t, ok, "a new window")
	assert.Equal(t, 4, n, "the first line of a new window says how many were held back")
	ok, n = allow("a")
	assert.True(t, ok)
	assert.Zero(t, n)

	// At most 3 sources are tracked: old windows are swept first, then
	// the rest share one allowance.
	allow("c")
	now = now.Add(30 * time.Second)
	for _, s := range []string{"d", "e", "f"} {
		ok, _ := allow(s)
		assert.True(t, ok, s)
	}
	ok, _ = allow("g")
	assert.False(t, ok, "the shared allowance of the sources beyond the maximum is spent")
	assert.LessOrEqual(t, len(l.sources), 3+1)
}

// TestAccessLog: with AccessLog, one Info record per connection that
// passed its handshake, naming its key, suite, bytes and end; none for a
// refused one. Without it, the same line at debug level.
func TestAccessLog(t *testing.T) {
	cfg := testConfig(t)
	for _, access := range []bool{true, false} {
		addr, log := spipeListen(t, echoServer(t), cfg, func(f *Forwarder) { f.AccessLog = access })
		require.NoError(t, dialSpipe(t, addr, cfg, "hello, access log"))
		level := map[bool]string{true: "INFO", false: "DEBUG"}[access]
		log.Wait(t, `level=`+level+` msg="connection closed" peer=127\.0\.0\.1:\d+ key=fp\w{4} suite=chacha20-poly1305 pfs=false`+
			` bytes_to_target=17 bytes_from_target=17 duration=\S+ end=closed\n`, nil)

		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		c.Close()
		log.Wait(t, `stage=handshake reason=truncated`, nil)
		assert.Equal(t, 1, log.Count(`msg="connection closed"`), "a refused connection has no record")
	}
}

// TestHandleLeavesReportingToItsCaller: Handle (a stdio connection, whose
// error the command prints) logs its failure at debug level only.
func TestHandleLeavesReportingToItsCaller(t *testing.T) {
	log := &testutil.Log{}
	f := newForwarder(freeAddr(t))
	f.Log = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	obs := newFailures()
	f.Observer = obs
	_, raw := accepted(t)
	err := f.Handle(context.Background(), raw)
	assert.Equal(t, "refused", Reason(err))
	assert.Equal(t, 1, log.Count("level=DEBUG", `msg="connection failed"`, "stage=dial", "reason=refused"), log.String())
	assert.Zero(t, log.Count("level=WARN"))
	assert.Equal(t, 1, obs.count(obs.dial, "refused"), "a refused target is counted")
}

// TestReasonSets: every reason the engine lists is one Reason gives, and
// the lists hold what the metrics need from the start.
func TestReasonSets(t *testing.T) {
	r := Reasons()
	assert.Subset(t, r.Handshake, []string{"auth", "version", "suite", "pfs_required", "malformed_handshake", "truncated", "timeout"})
	assert.Subset(t, r.Dial, []string{"refused", "unreachable", "dns", "timeout"})
	assert.Subset(t, r.Transfer, []string{"tampered", "truncated", "frame_too_large", "idle"})
	assert.Equal(t, []string{"limit", "carrier_limit", "other"}, r.Admission)
	assert.Equal(t, []string{"closed", "reset", "shutdown"}, r.Ends)
	// A side leaving, or the shutdown, is an end: never a failure series.
	for _, set := range [][]string{r.Handshake, r.Dial, r.Admission, r.Transfer} {
		assert.NotContains(t, set, "shutdown")
	}
	assert.NotContains(t, r.Transfer, "reset")
	assert.Equal(t, []string{"tampered", "truncated", "frame_too_large", "malformed_frame", "counter_exhausted"}, r.Frame)
	for _, reason := range r.Frame {
		assert.Contains(t, r.Transfer, reason)
	}
	for _, p := range protocolFailures {
		assert.Equal(t, p.reason, Reason(p.err), "%v", p.err)
		assert.Equal(t, p.where&inFrame != 0, IsFrameError(p.err), "%v", p.err)
	}
	assert.False(t, IsFrameError(io.EOF))
	// A stream of a carrier that failed on a frame: the stream's reason is
	// the carrier, whose failure counts the frame, once.
	streamErr := &TransferError{Side: "client", Op: "read", Err: fmt.Errorf("%w: %w", mux.ErrSessionClosed, spipe.ErrTruncated)}
	assert.Equal(t, "carrier", Reason(streamErr))
	assert.False(t, IsFrameError(streamErr))
}

// freeAddr is a 127.0.0.1 address nothing listens on.
func freeAddr(t *testing.T) string {
	ln := listenTCP(t)
	ln.Close()
	return ln.Addr().String()
}
