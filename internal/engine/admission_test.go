package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// byteSecure is a stand-in handshake: the peer must send one byte first.
// A peer that sends nothing stalls in it until the handshake timeout.
func byteSecure(_ context.Context, c net.Conn) (Conn, error) {
	if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
		return nil, err
	}
	return c.(Conn), nil
}

// readSecure is a stand-in handshake that reads n bytes (a first message
// of n bytes, or more than one message).
func readSecure(n int) func(context.Context, net.Conn) (Conn, error) {
	return func(_ context.Context, c net.Conn) (Conn, error) {
		if _, err := io.ReadFull(c, make([]byte, n)); err != nil {
			return nil, err
		}
		return c.(Conn), nil
	}
}

// idleFromManyAddresses opens n connections to addr from as many loopback
// addresses (127.0.1.1 and on) that never send anything; it returns those
// not cut before their dial returned.
func idleFromManyAddresses(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	var cs []net.Conn
	for i := range n {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 1, byte(1+i))}}
		if c, err := d.Dial("tcp", addr); err == nil {
			cs = append(cs, c)
			t.Cleanup(func() { c.Close() })
		}
	}
	return cs
}

// requireEcho sends msg on c and requires it back: the connection made it
// through its handshake to the echo target.
func requireEcho(t *testing.T, c net.Conn, msg, why string) {
	t.Helper()
	_, err := c.Write([]byte(msg))
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	got := make([]byte, len(msg))
	_, err = io.ReadFull(c, got)
	require.NoError(t, err, why)
	assert.Equal(t, msg, string(got))
}

// serveWith starts f on a fresh listener and returns its address; the
// test's cleanup stops it.
func serveWith(t *testing.T, f *Forwarder) string {
	t.Helper()
	ln := listenTCP(t)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- f.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-served })
	return ln.Addr().String()
}

// handshakeEcho connects, completes the stand-in handshake and echoes one
// message; it returns how long that took.
func handshakeEcho(t *testing.T, addr string) time.Duration {
	t.Helper()
	start := time.Now()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(20*time.Second)))
	_, err = c.Write([]byte("khello"))
	require.NoError(t, err)
	got := make([]byte, 5)
	_, err = io.ReadFull(c, got)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(got))
	return time.Since(start)
}

// dialFrom connects to addr from the loopback address ip (127.0.0.0/8 is
// all loopback on Linux) and closes the connection at the test's end.
func dialFrom(t *testing.T, ip, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	c, err := d.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// stall opens n connections from ip that never finish their handshake.
func stall(t *testing.T, ip, addr string, n int) []net.Conn {
	t.Helper()
	var cs []net.Conn
	for range n {
		cs = append(cs, dialFrom(t, ip, addr))
	}
	return cs
}

// cutWithin reports whether the server closes c within d (a read fails
// with something other than a timeout).
func cutWithin(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// fakeConn is a connection from a given address that records its close.
type fakeConn struct {
	net.Conn // nil: only RemoteAddr and Close are used
	remote   net.Addr
	closed   atomic.Bool
}

func (c *fakeConn) RemoteAddr() net.Addr { return c.remote }
func (c *fakeConn) Close() error         { c.closed.Store(true); return nil }

func fake(ip string) *fakeConn {
	return &fakeConn{remote: &net.TCPAddr{IP: net.ParseIP(ip), Port: 40000}}
}

// table is an admission table under test, with the connections it was
// given.
type table struct {
	*admission
	conns []*fakeConn
	ts    []*ticket
}

func newTable(max, perSource int) *table {
	return &table{admission: newAdmission(max, perSource, helloRule{}, slog.New(slog.DiscardHandler))}
}

// add admits a connection from ip and returns its index.
func (tb *table) add(ip string) int {
	c := fake(ip)
	tb.conns = append(tb.conns, c)
	tb.ts = append(tb.ts, tb.admission.add(c, false))
	return len(tb.conns) - 1
}

// cut lists the connections cut so far, by index.
func (tb *table) cut() []int {
	var out []int
	for i, c := range tb.conns {
		if c.closed.Load() {
			out = append(out, i)
		}
	}
	return out
}

func TestAdmissionPerSourceCapCutsThatSourcesOldest(t *testing.T) {
	tb := newTable(100, 3)
	a0, a1, a2 := tb.add("192.0.2.1"), tb.add("192.0.2.1"), tb.add("192.0.2.1")
	b0 := tb.add("192.0.2.2")
	assert.Empty(t, tb.cut(), "nothing is cut below the caps")
	a3 := tb.add("192.0.2.1")
	assert.Equal(t, []int{a0}, tb.cut(), "the fourth from one source cuts its oldest")
	assert.ErrorIs(t, tb.ts[a0].leave(), errEvicted, "the cut handshake learns why")
	tb.add("192.0.2.1")
	assert.Equal(t, []int{a0, a1}, tb.cut(), "and then the next oldest")
	assert.Equal(t, 4, tb.len())
	for _, i := range []int{a2, a3, b0} {
		assert.NoError(t, tb.ts[i].leave())
	}
}

func TestAdmissionFullTableCutsTheBusiestSourcesOldest(t *testing.T) {
	tb := newTable(6, 6)
	c0 := tb.add("192.0.2.3") // the oldest of all, alone from its source
	a0, a1, a2 := tb.add("192.0.2.1"), tb.add("192.0.2.1"), tb.add("192.0.2.1")
	b0, b1 := tb.add("192.0.2.2"), tb.add("192.0.2.2")
	require.Equal(t, 6, tb.len())

	tb.add("192.0.2.4")
	assert.Equal(t, []int{a0}, tb.cut(), "a full table cuts the oldest of the busiest source (3 places)")
	// Now 192.0.2.1 and .2 hold two places each: of equals, the one whose
	// oldest handshake is older gives.
	tb.add("192.0.2.5")
	assert.Equal(t, []int{a0, a1}, tb.cut(), "a tie goes against the source with the older handshake")
	tb.add("192.0.2.6")
	assert.Equal(t, []int{a0, a1, b0}, tb.cut(), "then the busiest is 192.0.2.2")
	// Every source holds one place: the oldest handshake of all goes.
	tb.add("192.0.2.7")
	assert.Equal(t, []int{c0, a0, a1, b0}, tb.cut())
	tb.add("192.0.2.8")
	assert.Equal(t, []int{c0, a0, a1, a2, b0}, tb.cut())
	assert.Equal(t, 6, tb.len())
	assert.NoError(t, tb.ts[b1].leave())
}

// TestAdmissionSparesHandshakesPastTheirFirstMessage: of sources holding
// as many places, a full table cuts from one with handshakes still
// waiting for their first message, and those before any that have one;
// so does a source at its cap. A source holding fewer places is still
// never cut for one holding more.
func TestAdmissionSparesHandshakesPastTheirFirstMessage(t *testing.T) {
	tb := newTable(8, 3)
	h0, h1 := tb.add("192.0.2.1"), tb.add("192.0.2.1")
	tb.ts[h0].firstMessageIn()
	tb.ts[h1].firstMessageIn()
	w0 := tb.add("192.0.2.1")
	tb.add("192.0.2.1")
	assert.Equal(t, []int{w0}, tb.cut(), "a source at its cap gives its oldest still waiting, not its oldest")

	// A flood from many sources, one idle connection each: the oldest of
	// the table, 192.0.2.9's, is past its first message and stays.
	tb = newTable(8, 8)
	honest := tb.add("192.0.2.9")
	tb.ts[honest].firstMessageIn()
	for i := range 1000 {
		tb.add(fmt.Sprintf("198.51.100.%d", i%250))
	}
	assert.False(t, tb.conns[honest].closed.Load(), "a handshake past its first message was cut for idle ones")
	assert.Len(t, tb.cut(), 1000-7)

	// Replays (first message in) from sources holding two places each do
	// not cut a source holding one, even before its first message is in.
	tb = newTable(8, 8)
	for i := range 8 {
		tb.ts[tb.add(fmt.Sprintf("198.51.100.%d", i/2))].firstMessageIn()
	}
	honest = tb.add("192.0.2.9")
	for i := range 100 {
		tb.ts[tb.add(fmt.Sprintf("198.51.100.%d", i%4))].firstMessageIn()
	}
	assert.False(t, tb.conns[honest].closed.Load(), "a source holding one handshake lost it to sources holding two")

	// When every handshake has its first message, the busiest source
	// gives as before.
	tb = newTable(4, 4)
	for _, ip := range []string{"192.0.2.1", "192.0.2.2", "192.0.2.2", "192.0.2.3"} {
		tb.ts[tb.add(ip)].firstMessageIn()
	}
	tb.add("192.0.2.4")
	assert.Equal(t, []int{1}, tb.cut())
}

// TestAdmissionFloodCutsOnlyItself: a flood from one source against a
// full table cuts only its own handshakes, however long it goes on.
func TestAdmissionFloodCutsOnlyItself(t *testing.T) {
	tb := newTable(64, 64)
	honest := []int{tb.add("192.0.2.1"), tb.add("2001:db8::1"), tb.add("198.51.100.7")}
	for range 10_000 {
		tb.add("203.0.113.9")
	}
	assert.Equal(t, 64, tb.len())
	for _, i := range honest {
		assert.False(t, tb.conns[i].closed.Load(), "a connection from another source was cut")
		assert.NoError(t, tb.ts[i].leave())
	}
	assert.Len(t, tb.cut(), 10_000-61)
}

func TestAdmissionLeaveFreesThePlace(t *testing.T) {
	tb := newTable(2, 2)
	a0, a1 := tb.add("192.0.2.1"), tb.add("192.0.2.1")
	require.NoError(t, tb.ts[a0].leave(), "an authenticated handshake leaves the table")
	assert.Equal(t, 1, tb.len())
	tb.add("192.0.2.1")
	assert.Empty(t, tb.cut(), "its place was free: nothing cut")
	tb.add("192.0.2.1")
	assert.Equal(t, []int{a1}, tb.cut(), "a handshake that left is never cut")
	tb.ts[a0].cut(errHelloTimeout)
	assert.False(t, tb.conns[a0].closed.Load(), "a late deadline does not touch a connection that left")
	assert.NoError(t, tb.ts[a0].leave(), "leaving twice is harmless")
}

func TestAdmissionCloseCutsEverything(t *testing.T) {
	tb := newTable(10, 10)
	for range 5 {
		tb.add("192.0.2.1")
	}
	left := tb.add("192.0.2.2")
	require.NoError(t, tb.ts[left].leave())
	tb.close(errShutdown)
	assert.Equal(t, []int{0, 1, 2, 3, 4}, tb.cut())
	assert.Zero(t, tb.len())
	for i := range 5 {
		assert.ErrorIs(t, tb.ts[i].leave(), errShutdown)
	}
	late := tb.add("192.0.2.3")
	assert.True(t, tb.conns[late].closed.Load(), "a connection accepted after shutdown is cut at once")
	assert.ErrorIs(t, tb.ts[late].leave(), errShutdown)
}

func TestCutErrorReason(t *testing.T) {
	closed := &net.OpError{Op: "read", Err: net.ErrClosed}
	for cause, want := range map[error]string{errEvicted: "evicted", errHelloTimeout: "hello_timeout", errShutdown: "shutdown"} {
		err := &cutError{cause: cause, err: closed}
		assert.Equal(t, want, Reason(err))
		assert.ErrorIs(t, err, cause)
		assert.ErrorIs(t, err, net.ErrClosed)
	}
	// The cut wins over whatever the closed socket looked like.
	assert.Equal(t, "evicted", Reason(&cutError{cause: errEvicted, err: io.ErrUnexpectedEOF}))
}

// handshakeReasons records the reasons of failed handshakes, and ends.
type handshakeReasons struct {
	nopObserver
	mu      sync.Mutex
	reasons map[string]int
}

func (o *handshakeReasons) Handshake(_ time.Duration, err error) {
	if err == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.reasons == nil {
		o.reasons = map[string]int{}
	}
	o.reasons[Reason(err)]++
}

// Ended records an end as "end:" and how it ended.
func (o *handshakeReasons) Ended(how string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.reasons == nil {
		o.reasons = map[string]int{}
	}
	o.reasons["end:"+how]++
}

func (o *handshakeReasons) count(reason string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.reasons[reason]
}

// TestStallersFromOneSourceCannotLockOutAnother: far more stalled
// handshakes from 127.0.0.2 than the table holds; a client from 127.0.0.1
// is served at once, and each staller beyond the per-source cap cut the
// oldest of its own.
func TestStallersFromOneSourceCannotLockOutAnother(t *testing.T) {
	f := newForwarder(echoServer(t))
	f.Secure = byteSecure
	f.MaxPending = 16
	f.MaxPendingPerSource = 8
	f.HandshakeTimeout = 10 * time.Second
	obs := &handshakeReasons{}
	f.Observer = obs
	addr := serveWith(t, f)
	stallers := stall(t, "127.0.0.2", addr, 200)
	assert.Less(t, handshakeEcho(t, addr), 2*time.Second, "the client waited for stalled handshakes")
	for _, c := range stallers[:192] {
		assert.True(t, cutWithin(c, 5*time.Second), "an old staller was not cut")
	}
	for _, c := range stallers[192:] {
		assert.False(t, cutWithin(c, 100*time.Millisecond), "one of the newest stallers, under the cap, was cut")
	}
	require.True(t, settle(func() bool { return obs.count("evicted") == 192 }), "evictions counted: %d", obs.count("evicted"))
}

// TestFullTableCutsTheBusiestSource: stallers from two sources fill the
// table; a client from a third is admitted by cutting the busier source's
// oldest handshake, and the lighter source keeps all of its own.
func TestFullTableCutsTheBusiestSource(t *testing.T) {
	f := newForwarder(echoServer(t))
	f.Secure = byteSecure
	f.MaxPending = 8
	f.MaxPendingPerSource = 8
	addr := serveWith(t, f)
	light := stall(t, "127.0.0.3", addr, 3)
	busy := stall(t, "127.0.0.2", addr, 5)
	time.Sleep(100 * time.Millisecond) // let the listener take them all in
	assert.Less(t, handshakeEcho(t, addr), 2*time.Second)
	assert.True(t, cutWithin(busy[0], 5*time.Second), "the busiest source's oldest was not cut")
	for _, c := range append(light, busy[1:]...) {
		assert.False(t, cutWithin(c, 100*time.Millisecond), "the wrong handshake was cut")
	}
}

// TestManySourcesCannotCutAHandshakePastItsFirstMessage: idle
// connections from more addresses than the table has places, so that
// each holds one at most, cut each other oldest first; but a handshake
// that has sent its first message is not theirs to cut, however old.
func TestManySourcesCannotCutAHandshakePastItsFirstMessage(t *testing.T) {
	const size = 10
	f := newForwarder(echoServer(t))
	f.Secure = readSecure(size + 1) // the first message, then one more byte later
	f.FirstMessageSize = size
	f.MaxPending = 16
	obs := &handshakeReasons{}
	f.Observer = obs
	addr := serveWith(t, f)

	c := dialFrom(t, "127.0.0.1", addr)
	_, err := c.Write([]byte("0123456789"))
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond) // read by the handshake
	idle := idleFromManyAddresses(t, addr, 200)
	require.True(t, settle(func() bool { return obs.count("evicted") == 200-15 }), "evicted: %d", obs.count("evicted"))
	_, err = c.Write([]byte("!"))
	require.NoError(t, err)
	requireEcho(t, c, "hello", "the handshake past its first message was cut")
	assert.True(t, cutWithin(idle[0], 5*time.Second), "the oldest idle connection was not cut")
}

// TestFirstMessageUnreadStillCounts: a handshake whose first message
// sits in its socket, unread because its goroutine has not run yet, is
// spared as one that has read it (Linux, where the socket says how much
// it holds).
func TestFirstMessageUnreadStillCounts(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the socket's unread byte count is read on Linux only")
	}
	const size = 10
	release := make(chan struct{})
	var first atomic.Bool
	f := newForwarder(echoServer(t))
	read := readSecure(size)
	f.Secure = func(ctx context.Context, c net.Conn) (Conn, error) {
		if first.CompareAndSwap(false, true) {
			<-release // a handshake goroutine that has not got to its read
		}
		return read(ctx, c)
	}
	f.FirstMessageSize = size
	f.MaxPending = 16
	obs := &handshakeReasons{}
	f.Observer = obs
	addr := serveWith(t, f)
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before Serve stops, which waits for the handshake

	c := dialFrom(t, "127.0.0.1", addr)
	_, err := c.Write([]byte("0123456789"))
	require.NoError(t, err)
	require.True(t, settle(first.Load))
	idleFromManyAddresses(t, addr, 200)
	require.True(t, settle(func() bool { return obs.count("evicted") == 200-15 }), "evicted: %d", obs.count("evicted"))
	unblock()
	requireEcho(t, c, "hello", "the handshake with its first message unread was cut")
}

// TestFirstMessageDeadline: a peer that has not sent the whole first
// message by the deadline is cut then, long before the handshake timeout,
// with its own reason; one that sends it in time, even in pieces, is not.
func TestFirstMessageDeadline(t *testing.T) {
	const size = 10
	f := newForwarder(echoServer(t))
	f.Secure = readSecure(size)
	f.FirstMessageSize = size
	f.FirstMessageTimeout = 300 * time.Millisecond
	f.HandshakeTimeout = 10 * time.Second
	obs := &handshakeReasons{}
	f.Observer = obs
	addr := serveWith(t, f)

	// A byte every 100 ms: 3 in by the deadline, of 10.
	slow := dialFrom(t, "127.0.0.1", addr)
	start := time.Now()
	cut := make(chan time.Duration, 1)
	go func() {
		for range size {
			if _, err := slow.Write([]byte{'x'}); err != nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	go func() {
		_ = slow.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, _ = io.Copy(io.Discard, slow)
		cut <- time.Since(start)
	}()

	// The whole first message in two pieces, just inside the deadline,
	// then an echo well after it.
	c := dialFrom(t, "127.0.0.1", addr)
	_, err := c.Write([]byte("01234"))
	require.NoError(t, err)
	time.Sleep(200 * time.Millisecond)
	_, err = c.Write([]byte("56789"))
	require.NoError(t, err)
	time.Sleep(300 * time.Millisecond)
	requireEcho(t, c, "hello", "a client that sent its first message in time was cut")

	d := <-cut
	assert.GreaterOrEqual(t, d, 250*time.Millisecond, "cut before the deadline")
	assert.Less(t, d, 2*time.Second, "a slow first message held its place past the deadline")
	require.True(t, settle(func() bool { return obs.count("hello_timeout") == 1 }))
}

// TestFirstMessageDeadlineNotPastHandshakeTimeout: a first-message
// deadline no shorter than the handshake timeout is the handshake timeout.
func TestFirstMessageDeadlineNotPastHandshakeTimeout(t *testing.T) {
	f := &Forwarder{FirstMessageSize: 106} // the default handshake timeout, 10 s
	assert.Equal(t, helloRule{size: 106, timeout: 3 * time.Second}, f.helloRule())
	f.HandshakeTimeout = 3 * time.Second
	assert.Equal(t, helloRule{size: 106}, f.helloRule(), "a 3 s handshake timeout makes a 3 s first-message deadline moot")
	f.FirstMessageTimeout = 500 * time.Millisecond
	assert.Equal(t, helloRule{size: 106, timeout: 500 * time.Millisecond}, f.helloRule())
	assert.Equal(t, helloRule{}, (&Forwarder{}).helloRule(), "no first message, no deadline")
}

// TestShutdownCutsPendingHandshakesAtOnce: when Serve's context ends, a
// peer stalled in its handshake is cut at once, while a connection past
// its handshake keeps working through the grace period and Serve returns
// as soon as it ends.
func TestShutdownCutsPendingHandshakesAtOnce(t *testing.T) {
	f := newForwarder(echoServer(t))
	f.Secure = byteSecure
	f.HandshakeTimeout = 30 * time.Second
	f.ShutdownTimeout = 20 * time.Second
	obs := &handshakeReasons{}
	f.Observer = obs
	ln := listenTCP(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- f.Serve(ctx, ln) }()
	addr := ln.Addr().String()

	live := dialFrom(t, "127.0.0.1", addr)
	require.NoError(t, live.SetDeadline(time.Now().Add(20*time.Second)))
	_, err := live.Write([]byte("kping"))
	require.NoError(t, err)
	_, err = io.ReadFull(live, make([]byte, 4))
	require.NoError(t, err)
	staller := dialFrom(t, "127.0.0.2", addr)
	time.Sleep(100 * time.Millisecond) // accepted and in its handshake

	cancel()
	start := time.Now()
	assert.True(t, cutWithin(staller, 2*time.Second), "the pending handshake held on through the grace period")
	assert.Less(t, time.Since(start), time.Second)

	// The live connection still echoes, and holds Serve up.
	_, err = live.Write([]byte("pong"))
	require.NoError(t, err)
	got := make([]byte, 4)
	_, err = io.ReadFull(live, got)
	require.NoError(t, err, "a connection past its handshake was cut at shutdown")
	assert.Equal(t, "pong", string(got))
	select {
	case <-served:
		t.Fatal("Serve returned with a connection open in the grace period")
	default:
	}
	require.NoError(t, live.(*net.TCPConn).CloseWrite())
	_, err = io.ReadAll(live)
	require.NoError(t, err)
	select {
	case err := <-served:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return once the last connection ended")
	}
	// The cut handshake ended with the shutdown: an end, not a failed
	// handshake.
	assert.Equal(t, 1, obs.count("end:shutdown"))
	assert.Zero(t, obs.count("shutdown"))
	assert.Equal(t, 1, obs.count("end:closed"))
}

// TestLimits: the defaults of MaxConns, MaxPending and
// MaxPendingPerSource, and how they bound each other.
func TestLimits(t *testing.T) {
	for _, c := range []struct {
		set  [3]int // MaxConns, MaxPending, MaxPendingPerSource
		want [3]int
	}{
		{[3]int{0, 0, 0}, [3]int{100, 1024, 128}},
		{[3]int{-1, 0, 0}, [3]int{-1, 1024, 128}},
		// A client may open at once every connection it could forward.
		{[3]int{1000, 0, 0}, [3]int{1000, 1024, 1000}},
		{[3]int{5000, 0, 0}, [3]int{5000, 5000, 5000}},
		{[3]int{0, 64, 0}, [3]int{100, 64, 64}},
		{[3]int{0, 0, 7}, [3]int{100, 1024, 7}},
		{[3]int{0, 64, 1000}, [3]int{100, 64, 64}},
	} {
		f := Forwarder{MaxConns: c.set[0], MaxPending: c.set[1], MaxPendingPerSource: c.set[2]}
		maxConns, maxPending, perSource := f.limits()
		assert.Equal(t, c.want, [3]int{maxConns, maxPending, perSource},
			"MaxConns, MaxPending, MaxPendingPerSource set to %v", c.set)
	}
}

// TestAdmissionAddsRaceNothing: tickets added from many goroutines at
// once, from one source at its cap of one, so that each newcomer cuts a
// ticket another goroutine has just added, asking whether its first
// message is in: the watch that knows is in place before the ticket is
// in the table (go test -race sees it otherwise), so a ticket whose
// first message is in is never taken for one still waiting.
func TestAdmissionAddsRaceNothing(t *testing.T) {
	a := newAdmission(1024, 1, helloRule{size: 107}, slog.New(slog.DiscardHandler))
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				a.add(fake("192.0.2.1"), false)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 1, a.len())
}
