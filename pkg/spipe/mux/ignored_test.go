package mux

import (
	"io"
	"testing"

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
