package mux

import (
	"io"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil/spec"
)

// alive checks that the session still runs after what the key holder
// sent: a ping sent now is answered (frames are handled in order).
func alive(t *testing.T, p *spec.Peer, srv *Session, why string) {
	t.Helper()
	require.NoError(t, p.Send("ping", nil, map[string]uint64{"opaque": 7}), why)
	assert.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0, 7}, readUntil(t, p, "pong"), why)
	assert.NoError(t, srv.Err(), why)
}

// TestIgnoredCredit: a credit of 0, and credit for a direction the
// server has ended or for a stream closed or reset, are ignored, not
// protocol errors (docs/PROTOCOL.md 7.3).
func TestIgnoredCredit(t *testing.T) {
	credit := func(stream, incr uint64) map[string]uint64 {
		return map[string]uint64{"stream_id": stream, "increment": incr}
	}
	p, srv := keyholderServer(t, &Config{KeepAlive: -1}, false)
	require.NoError(t, p.Send("open", []byte("a"), id(1)))
	st := acceptWithin(t, srv).(*Stream)
	require.NoError(t, p.Send("credit", nil, credit(1, 0)))
	alive(t, p, srv, "a credit of 0 on an open stream")
	st.mu.Lock()
	assert.Equal(t, uint64(MinStreamWindow), st.tx.limit, "it granted nothing")
	st.mu.Unlock()

	require.NoError(t, st.CloseWrite())
	require.NoError(t, p.Send("credit", nil, credit(1, 1000)))
	alive(t, p, srv, "credit for a direction the server ended")

	require.NoError(t, p.Send("reset", nil, id(1)))
	require.NoError(t, p.Send("credit", nil, credit(1, 0)))
	require.NoError(t, p.Send("credit", nil, credit(1, 1<<32-1)))
	alive(t, p, srv, "credit for a stream reset")

	require.NoError(t, p.Send("open", nil, id(2)))
	st2 := acceptWithin(t, srv)
	require.NoError(t, p.Send("end", nil, id(2)))
	_, err := io.ReadAll(st2)
	require.NoError(t, err)
	require.NoError(t, st2.(*Stream).CloseWrite())
	readUntil(t, p, "end")
	require.NoError(t, p.Send("credit", nil, credit(2, 0)))
	require.NoError(t, p.Send("credit", nil, credit(2, 5)))
	alive(t, p, srv, "credit for a stream closed")
}

// TestFramesPastGoAwayAreIgnored: after a server's go-away with last
// stream id 1, every frame for a higher id is ignored unchecked (opens
// out of order, data, credit, ends and resets of ids never opened), and
// stream 1 carries on (docs/PROTOCOL.md 7.4).
func TestFramesPastGoAwayAreIgnored(t *testing.T) {
	p, srv := keyholderServer(t, &Config{KeepAlive: -1}, false)
	require.NoError(t, p.Send("open", []byte("one"), id(1)))
	st := acceptWithin(t, srv)
	require.NoError(t, srv.GoAway())
	assert.Equal(t, []byte{0, 0, 0, 1, goAwayNoError}, readUntil(t, p, "go-away"))
	var wire []byte
	wire = append(wire, p.Frame("open", []byte("three"), id(3))...)
	wire = append(wire, p.Frame("stream data", make([]byte, 2*MinStreamWindow/3), id(3))...)
	wire = append(wire, p.Frame("stream data", make([]byte, 2*MinStreamWindow/3), id(3))...)
	wire = append(wire, p.Frame("open", nil, id(2))...)
	wire = append(wire, p.Frame("credit", nil, map[string]uint64{"stream_id": 7, "increment": 9})...)
	wire = append(wire, p.Frame("end", nil, id(8))...)
	wire = append(wire, p.Frame("reset", nil, id(9))...)
	_, err := p.Conn.Write(wire)
	require.NoError(t, err)
	alive(t, p, srv, "frames past the go-away")

	require.NoError(t, p.Send("end", nil, id(1)))
	got, err := io.ReadAll(st)
	require.NoError(t, err)
	assert.Equal(t, "one", string(got), "stream 1 carries on")
	require.NoError(t, st.(*Stream).CloseWrite())
	readUntil(t, p, "close-write")
	require.NoError(t, p.Send("close-write", nil, nil))
	<-srv.Done()
	assert.NoError(t, srv.Err())
}

// TestOpenAfterClientGoAway: a client's go-away says it opens no more
// streams (its last stream id, here 5, is ignored); an open after it is
// a protocol error, answered with go-away code protocol error naming the
// last stream the server took (docs/PROTOCOL.md 7.4, 7.6).
func TestOpenAfterClientGoAway(t *testing.T) {
	p, srv := keyholderServer(t, &Config{KeepAlive: -1}, false)
	require.NoError(t, p.Send("open", []byte("one"), id(1)))
	acceptWithin(t, srv)
	require.NoError(t, p.Send("go-away", nil, map[string]uint64{"last_stream_id": 5}))
	alive(t, p, srv, "a client's go-away with a nonzero last stream id")
	require.NoError(t, p.Send("open", nil, id(2)))
	assert.Equal(t, []byte{0, 0, 0, 1, goAwayProtocolError}, readUntil(t, p, "go-away"))
	<-srv.Done()
	assert.ErrorIs(t, srv.Err(), ErrProtocol)
}

// TestUnansweredPingSendsGoAway: a session whose ping goes unanswered
// sends go-away with code internal error, naming (a server) the last
// stream it took, and closes the carrier without close-write.
func TestUnansweredPingSendsGoAway(t *testing.T) {
	defer func(w time.Duration) { pongWait = w }(pongWait)
	pongWait = 50 * time.Millisecond
	p, srv := keyholderServer(t, &Config{KeepAlive: 20 * time.Millisecond}, false)
	require.NoError(t, p.Send("open", nil, id(1)))
	assert.Equal(t, []byte{0, 0, 0, 1, goAwayInternalError}, readUntil(t, p, "go-away"))
	_, _, err := p.Read()
	assert.Error(t, err, "no close-write: the carrier failed")
	<-srv.Done()
	assert.ErrorIs(t, srv.Err(), os.ErrDeadlineExceeded)
}

// TestCloseWriteUnanswered: once a session has sent its close-write (all
// its streams closed after a go-away), it closes the carrier if the
// peer's close-write has not come within closeFlush, and ends cleanly:
// nothing was lost.
func TestCloseWriteUnanswered(t *testing.T) {
	p, srv := keyholderServer(t, &Config{KeepAlive: -1}, false)
	require.NoError(t, srv.GoAway())
	readUntil(t, p, "close-write")
	start := time.Now()
	select {
	case <-srv.Done():
	case <-time.After(closeFlush + 8*time.Second):
		t.Fatal("the session waited on past closeFlush for the peer's close-write")
	}
	assert.GreaterOrEqual(t, time.Since(start), closeFlush/2, "it gave the peer time to answer")
	assert.NoError(t, srv.Err())
}
