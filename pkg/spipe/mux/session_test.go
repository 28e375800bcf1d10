package mux_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/pkg/spipe"
	"github.com/spipe-dev/spipe/pkg/spipe/mux"
)

// TestHalfCloseEachWay: each direction of a stream ends on its own; data
// keeps flowing the other way after one side's CloseWrite, and Close
// after both ends is clean.
func TestHalfCloseEachWay(t *testing.T) {
	cli, srv := pair(t)
	c, err := cli.Open(context.Background())
	require.NoError(t, err)
	_, err = c.Write([]byte("request"))
	require.NoError(t, err)
	require.NoError(t, c.(*mux.Stream).CloseWrite())

	s := accept(t, srv)
	got := wait(t, readAll(s))
	require.NoError(t, got.err)
	assert.Equal(t, "request", string(got.data))
	// The server answers after the client's end, then ends its own.
	back := readAll(c)
	_, err = s.Write([]byte("answer after the request's end"))
	require.NoError(t, err)
	require.NoError(t, s.CloseWrite())
	res := wait(t, back)
	require.NoError(t, res.err)
	assert.Equal(t, "answer after the request's end", string(res.data))
	assert.NoError(t, c.Close())
	assert.NoError(t, s.Close())
	_, err = c.Write([]byte("x"))
	assert.Error(t, err, "a closed stream cannot write")
}

// TestFirstDataNeedsNoAnswer: a stream's open and its first data leave
// without waiting for anything from the server: with the server's
// direction of the carrier held shut, the client opens streams, writes
// and ends them, and the server reads them all. (There is no
// acknowledgement of an open in the protocol: the server sends nothing.)
func TestFirstDataNeedsNoAnswer(t *testing.T) {
	a, b := testutil.TCPPair(t)
	held := &testutil.HeldWrites{Conn: b}
	cli, srv := sessions(t, a, held, nil, nil)
	held.Hold()
	defer held.Release()

	for _, msg := range []string{"first data", "second stream", "third"} {
		c, err := cli.Open(context.Background())
		require.NoError(t, err)
		_, err = c.Write([]byte(msg))
		require.NoError(t, err)
		require.NoError(t, c.(*mux.Stream).CloseWrite())
		got := wait(t, readAll(accept(t, srv)))
		require.NoError(t, got.err)
		assert.Equal(t, msg, string(got.data))
	}
	assert.Zero(t, held.Blocked(), "the server had nothing to answer")
}

// TestResetReachesThePeer: a reset fails the peer's reads and writes with
// ErrStreamReset, never a clean end, and Close before both ends is a
// reset too. Another stream of the session is not disturbed.
func TestResetReachesThePeer(t *testing.T) {
	cli, srv := pair(t)
	other, err := cli.Open(context.Background())
	require.NoError(t, err)
	_, err = other.Write([]byte("o"))
	require.NoError(t, err)
	otherSrv := accept(t, srv)
	_, err = io.ReadFull(otherSrv, make([]byte, 1))
	require.NoError(t, err)

	for name, abort := range map[string]func(*mux.Stream) error{
		"Reset":                     (*mux.Stream).Reset,
		"Close without CloseWrite":  (*mux.Stream).Close,
		"Close before reading back": func(s *mux.Stream) error { s.CloseWrite(); return s.Close() },
	} {
		c, err := cli.Open(context.Background())
		require.NoError(t, err)
		_, err = c.Write([]byte("partial"))
		require.NoError(t, err)
		s := accept(t, srv)
		buf := make([]byte, 7)
		_, err = io.ReadFull(s, buf)
		require.NoError(t, err, name)
		require.NoError(t, abort(c.(*mux.Stream)), name)

		if name != "Close before reading back" {
			res := wait(t, readAll(s))
			assert.ErrorIs(t, res.err, mux.ErrStreamReset, "%s: the peer's Read", name)
		}
		require.Eventually(t, func() bool {
			_, err := s.Write([]byte("x"))
			return errors.Is(err, mux.ErrStreamReset)
		}, 5*time.Second, 10*time.Millisecond, "%s: the peer's Write", name)
		_, err = c.Read(buf)
		assert.ErrorIs(t, err, net.ErrClosed, "%s: this side's Read", name)
	}

	// The other stream still works both ways.
	_, err = other.Write([]byte("still here"))
	require.NoError(t, err)
	buf := make([]byte, 10)
	_, err = io.ReadFull(otherSrv, buf)
	require.NoError(t, err)
	assert.Equal(t, "still here", string(buf))
}

// TestCloseFlushesStreamEnds: a session closed right after its last
// stream ended delivers that stream whole: Close sends what was queued
// before it tears the carrier down, and both sessions end cleanly.
func TestCloseFlushesStreamEnds(t *testing.T) {
	for range 20 {
		cli, srv := pair(t)
		c, err := cli.Open(context.Background())
		require.NoError(t, err)
		data := make([]byte, 200<<10)
		for i := range data {
			data[i] = byte(i)
		}
		_, err = c.Write(data)
		require.NoError(t, err)
		require.NoError(t, c.(*mux.Stream).CloseWrite())
		s := accept(t, srv)
		r := readAll(s)
		require.NoError(t, s.CloseWrite())
		require.NoError(t, wait(t, readAll(c)).err)
		require.NoError(t, cli.Close())

		res := wait(t, r)
		require.NoError(t, res.err, "the stream ended cleanly")
		assert.Equal(t, data, res.data)
		select {
		case <-srv.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the server's session did not end after the client's Close")
		}
		assert.NoError(t, srv.Err(), "the server saw a clean end")
		assert.NoError(t, cli.Err())
	}
}

// TestCarrierDeathResetsStreams: when the carrier breaks (here its TCP
// connection is cut, so the server sees the stream of frames end without
// the authenticated close), every open stream fails with ErrSessionClosed
// on both sides and Err names the carrier's failure.
func TestCarrierDeathResetsStreams(t *testing.T) {
	a, b := testutil.TCPPair(t)
	cli, srv := sessions(t, a, b, nil, nil)
	var streams []net.Conn
	for range 3 {
		c, err := cli.Open(context.Background())
		require.NoError(t, err)
		_, err = c.Write([]byte("x"))
		require.NoError(t, err)
		streams = append(streams, c, accept(t, srv))
	}
	a.Close()
	for i, s := range streams {
		res := wait(t, readAll(s))
		assert.ErrorIs(t, res.err, mux.ErrSessionClosed, "stream %d", i)
	}
	<-srv.Done()
	// It saw the frames end without the authenticated close, or its own
	// write (a ping, a window update) met the closed socket first.
	err := srv.Err()
	assert.True(t, errors.Is(err, spipe.ErrTruncated) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE),
		"the server names the carrier's failure: %v", err)
	_, err = srv.Accept()
	assert.ErrorIs(t, err, mux.ErrSessionClosed)
	_, err = cli.Open(context.Background())
	assert.ErrorIs(t, err, mux.ErrSessionClosed)
}

// TestTamperedCarrier: a carrier frame that fails authentication ends the
// session with ErrTampered; its streams fail, none ends cleanly.
func TestTamperedCarrier(t *testing.T) {
	a, b := testutil.TCPPair(t)
	flip := &flipper{Conn: b}
	cli, srv := sessions(t, a, flip, nil, nil)
	c, err := cli.Open(context.Background())
	require.NoError(t, err)
	r := readAll(c) // a reader announces the stream
	s := accept(t, srv)
	flip.arm()
	_, _ = s.Write([]byte("this frame is modified on the wire"))
	res := wait(t, r)
	assert.ErrorIs(t, res.err, mux.ErrSessionClosed)
	<-cli.Done()
	assert.ErrorIs(t, cli.Err(), spipe.ErrTampered)
}

// flipper flips a bit in the first write after arm.
type flipper struct {
	net.Conn
	mu    sync.Mutex
	armed bool
}

func (f *flipper) arm() { f.mu.Lock(); f.armed = true; f.mu.Unlock() }

func (f *flipper) Write(p []byte) (int, error) {
	f.mu.Lock()
	if f.armed {
		f.armed = false
		q := append([]byte(nil), p...)
		q[len(q)-1] ^= 1
		p = q
	}
	f.mu.Unlock()
	return f.Conn.Write(p)
}

// TestOnlyTheClientOpens: a server cannot open streams, and Accept on a
// client waits until its session ends.
func TestOnlyTheClientOpens(t *testing.T) {
	cli, srv := pair(t)
	_, err := srv.Open(context.Background())
	assert.Error(t, err)
	done := make(chan error, 1)
	go func() { _, err := cli.Accept(); done <- err }()
	select {
	case err := <-done:
		t.Fatalf("a client's Accept returned %v while its session runs", err)
	case <-time.After(50 * time.Millisecond):
	}
	cli.Close()
	assert.ErrorIs(t, <-done, mux.ErrSessionClosed)
}

// TestMaxStreams: streams the client opens beyond the server's MaxStreams
// are reset; closing one makes room.
func TestMaxStreams(t *testing.T) {
	a, b := testutil.TCPPair(t)
	cli, srv := sessions(t, a, b, nil, &mux.Config{MaxStreams: 2})
	var open []*mux.Stream
	for range 2 {
		c, err := cli.Open(context.Background())
		require.NoError(t, err)
		_, err = c.Write([]byte("x"))
		require.NoError(t, err)
		open = append(open, c.(*mux.Stream))
		accept(t, srv)
	}
	extra, err := cli.Open(context.Background())
	require.NoError(t, err, "opening costs no round trip, so it succeeds locally")
	res := wait(t, readAll(extra))
	assert.ErrorIs(t, res.err, mux.ErrStreamReset, "the third stream is reset")
	assert.Equal(t, 2, srv.NumStreams())

	require.NoError(t, open[0].Reset())
	require.Eventually(t, func() bool { return srv.NumStreams() == 1 }, 5*time.Second, 5*time.Millisecond)
	next, err := cli.Open(context.Background())
	require.NoError(t, err)
	_, err = next.Write([]byte("room again"))
	require.NoError(t, err)
	s := accept(t, srv)
	buf := make([]byte, 10)
	_, err = io.ReadFull(s, buf)
	require.NoError(t, err, "a stream opened once one ended is accepted")
	assert.Equal(t, "room again", string(buf))
}

// TestFlowControlIsPerStream: a stream whose reader stalls blocks only its
// own writer, after its window; another stream keeps moving.
func TestFlowControlIsPerStream(t *testing.T) {
	cli, srv := pair(t)
	stalled, err := cli.Open(context.Background())
	require.NoError(t, err)
	wrote := make(chan int64, 1)
	go func() {
		n, _ := stalled.Write(make([]byte, 4<<20))
		wrote <- int64(n)
	}()
	_ = accept(t, srv) // never read
	live, err := cli.Open(context.Background())
	require.NoError(t, err)
	var liveSrv *mux.Stream
	for i := range 100 {
		_, err := live.Write(make([]byte, 16<<10))
		require.NoError(t, err)
		if i == 0 {
			liveSrv = accept(t, srv)
		}
		_, err = io.ReadFull(liveSrv, make([]byte, 16<<10))
		require.NoError(t, err)
	}
	select {
	case n := <-wrote:
		t.Fatalf("the stalled stream's 4 MiB write returned (%d bytes) with nobody reading", n)
	default:
	}
}

// TestNotMultiplexed: a connection that negotiated the plain byte stream
// cannot carry a session.
func TestNotMultiplexed(t *testing.T) {
	a, b := testutil.TCPPair(t)
	key := testKey(t)
	plain := &spipe.Config{Keys: []*spipe.Key{key}}
	both := &spipe.Config{Keys: []*spipe.Key{key}, Multiplex: true}
	go spipe.Client(a, plain).Handshake()
	_, err := mux.Server(spipe.Server(b, both), nil)
	assert.ErrorIs(t, err, mux.ErrNotMultiplexed)
}

// TestDeadlines: a read that times out fails with os.ErrDeadlineExceeded
// and leaves the stream usable.
func TestDeadlines(t *testing.T) {
	cli, srv := pair(t)
	c, err := cli.Open(context.Background())
	require.NoError(t, err)
	_, err = c.Write([]byte("a"))
	require.NoError(t, err)
	s := accept(t, srv)
	buf := make([]byte, 1)
	_, err = io.ReadFull(s, buf)
	require.NoError(t, err)
	require.NoError(t, s.SetReadDeadline(time.Now().Add(20*time.Millisecond)))
	_, err = s.Read(buf)
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	assert.True(t, ne.Timeout())
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	require.NoError(t, s.SetReadDeadline(time.Time{}))
	_, err = c.Write([]byte("b"))
	require.NoError(t, err)
	_, err = io.ReadFull(s, buf)
	require.NoError(t, err)
	assert.Equal(t, "b", string(buf))
}

// TestGoAway: a server's GoAway reaches the client: its GoingAway closes,
// Open fails with ErrGoAway, the stream already open carries on both
// ways, and once it has closed both sessions end cleanly on their own.
func TestGoAway(t *testing.T) {
	cli, srv := pair(t)
	c, err := cli.Open(context.Background())
	require.NoError(t, err)
	_, err = c.Write([]byte("before"))
	require.NoError(t, err)
	s := accept(t, srv)
	require.NoError(t, srv.GoAway())
	select {
	case <-cli.GoingAway():
	case <-time.After(10 * time.Second):
		t.Fatal("the client never heard the go-away")
	}
	_, err = cli.Open(context.Background())
	assert.ErrorIs(t, err, mux.ErrGoAway)

	_, err = c.Write([]byte(" and after"))
	require.NoError(t, err)
	require.NoError(t, c.(*mux.Stream).CloseWrite())
	got := wait(t, readAll(s))
	require.NoError(t, got.err)
	assert.Equal(t, "before and after", string(got.data))
	_, err = s.Write([]byte("answer"))
	require.NoError(t, err)
	require.NoError(t, s.CloseWrite())
	back := wait(t, readAll(c))
	require.NoError(t, back.err)
	assert.Equal(t, "answer", string(back.data))
	for _, sess := range []*mux.Session{cli, srv} {
		select {
		case <-sess.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("a session lived on after go-away with nothing open")
		}
		assert.NoError(t, sess.Err())
	}
}

// TestNilArguments: nil connections, contexts, readers and writers are
// errors, never panics.
func TestNilArguments(t *testing.T) {
	_, err := mux.Client(nil, nil)
	assert.Error(t, err)
	_, err = mux.Server(nil, nil)
	assert.Error(t, err)
	cli, srv := pair(t)
	var noContext context.Context
	_, err = cli.Open(noContext)
	assert.Error(t, err)
	c, err := cli.Open(context.Background())
	require.NoError(t, err)
	_, err = c.(*mux.Stream).ReadFrom(nil)
	assert.Error(t, err)
	_, err = c.(*mux.Stream).WriteTo(nil)
	assert.Error(t, err)
	_, err = srv.Open(context.Background())
	assert.Error(t, err, "a server opens no stream")
}

// TestDone: a stream's Done closes once it carries nothing more: after a
// reset, and after both ends have ended; not while a direction is open.
func TestDone(t *testing.T) {
	cli, srv := pair(t)
	c, err := cli.Open(context.Background())
	require.NoError(t, err)
	_, err = c.Write([]byte("x"))
	require.NoError(t, err)
	s := accept(t, srv)
	require.NoError(t, c.(*mux.Stream).CloseWrite())
	wait(t, readAll(s))
	select {
	case <-s.Done():
		t.Fatal("Done closed with the server's direction still open")
	default:
	}
	require.NoError(t, s.CloseWrite())
	wait(t, readAll(c))
	for _, st := range []*mux.Stream{c.(*mux.Stream), s} {
		select {
		case <-st.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("Done did not close after both ends")
		}
	}

	c, err = cli.Open(context.Background())
	require.NoError(t, err)
	_, err = c.Write([]byte("y"))
	require.NoError(t, err)
	s = accept(t, srv)
	require.NoError(t, c.(*mux.Stream).Reset())
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done did not close after the peer's reset")
	}
}

// stingy takes at most 7 bytes per write, and now and then nothing, when
// written to without blocking; its plain Write takes everything.
type stingy struct {
	mu    sync.Mutex
	got   []byte
	tries int
}

func (w *stingy) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, p...)
	return len(p), nil
}

func (w *stingy) TryWrite(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tries++
	if w.tries%3 == 0 {
		return 0, nil
	}
	n := min(7, len(p))
	w.got = append(w.got, p[:n]...)
	return n, nil
}

// TestWriteToWritesDirectly: a WriteTo whose writer can write without
// blocking gets the data written to it from the read loop, whatever part
// of each piece it takes at once; nothing is lost, doubled or reordered.
func TestWriteToWritesDirectly(t *testing.T) {
	cli, srv := pair(t)
	c, err := cli.Open(context.Background())
	require.NoError(t, err)
	_, err = c.Write([]byte{0})
	require.NoError(t, err)
	s := accept(t, srv)
	w := &stingy{}
	done := make(chan error, 1)
	go func() { _, err := s.WriteTo(w); done <- err }()
	var want []byte
	want = append(want, 0)
	for i := range 200 {
		msg := bytes.Repeat([]byte{byte(i)}, 1+i*13%97)
		want = append(want, msg...)
		_, err := c.Write(msg)
		require.NoError(t, err)
		if i%50 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	require.NoError(t, c.(*mux.Stream).CloseWrite())
	require.NoError(t, <-done)
	w.mu.Lock()
	defer w.mu.Unlock()
	assert.Equal(t, want, w.got)
	assert.Greater(t, w.tries, 0, "the read loop wrote directly")
}
