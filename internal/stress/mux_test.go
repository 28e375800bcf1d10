package stress

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/faultproxy"
	"github.com/spipe-dev/spipe/internal/service"
	"github.com/spipe-dev/spipe/internal/testutil/pipetest"
	"github.com/spipe-dev/spipe/internal/testutil/spec"
	"github.com/spipe-dev/spipe/pkg/spipe/mux"
)

// TestMuxFaults puts the fault proxy between connect --mux and listen and
// lets one fault hit the first carrier while several streams run on it.
// A fault on a carrier ends the carrier: every stream it carried then is
// reset at both ends, and none of them delivers a byte that was not sent
// or ends cleanly short of its data; the side that received the fault
// logs the carrier's failure with its reason; the streams that follow
// open on a new carrier and complete intact. A delay breaks nothing.
func TestMuxFaults(t *testing.T) {
	streams := pick(8, 32)
	size := pick(256<<10, 1<<20)
	key := pipetest.KeyFile(t)
	tg := startTarget(t, true)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.addr(), key, nil)
	cases := faultCases(6)
	var ids uint64 = 1 << 32
	for _, tc := range cases {
		for _, dir := range []faultproxy.Direction{faultproxy.ClientToServer, faultproxy.ServerToClient} {
			t.Run(fmt.Sprintf("%s %s", tc.name, dir), func(t *testing.T) {
				f := tc.fault
				f.Dir = dir
				listenCarrierFailures := listen.Log.Count("carrier failed")
				results, connect, proxy := echoesThroughFault(t, listen.Addr, 0, f, func(addr string) *pipetest.Service {
					return pipetest.MuxConnect(t, addr, key, nil)
				}, streams, size, &ids)
				require.Len(t, proxy.Applied(), 1, "the fault never fired")

				failed := 0
				// A stream cut before the listener dialled for it never
				// reached the target: its record is awaited, together,
				// for a short while only.
				settle := time.Now().Add(2 * time.Second)
				for _, r := range results {
					assert.True(t, bytes.HasPrefix(r.sent, r.got), "stream %d: echo differs from what was sent", r.id)
					if r.intact() {
						rec := tg.waitRecord(t, r.id, 10*time.Second)
						assert.True(t, bytes.HasPrefix(r.sent, rec.got), "stream %d: target received bytes that were never sent", r.id)
						assert.True(t, rec.clean, "stream %d: intact echo but the target saw %v", r.id, rec.err)
						continue
					}
					failed++
					if rec := tg.lookup(r.id, time.Until(settle)); rec != nil {
						assert.True(t, bytes.HasPrefix(r.sent, rec.got), "stream %d: target received bytes that were never sent", r.id)
						assert.False(t, rec.clean && rec.n < int64(size), "stream %d: the target saw a clean end of a cut stream", r.id)
					}
				}
				if tc.reasons == nil {
					assert.Zero(t, failed, "a delay must not break a stream")
					assert.Equal(t, listenCarrierFailures, listen.Log.Count("carrier failed"))
					assert.Zero(t, connect.Log.Count("carrier lost"))
					return
				}
				assert.NotZero(t, failed, "no stream was on the faulted carrier")
				receiver, line := listen, "carrier failed"
				if dir == faultproxy.ServerToClient {
					receiver, line = connect, "carrier lost"
				}
				waitReason(t, receiver.Log, tc.reasons, line)
				// The next stream opens on a new carrier and is intact.
				ids++
				r := echo(connect.Addr, ids, size, true, time.Minute)
				assert.True(t, r.intact(), "a stream after the fault: %v", r.err)
			})
		}
	}
}

// keyholder dials addr as a client holding the key in file path, built
// from docs/PROTOCOL.md alone (internal/testutil/spec), asking for mode 3:
// it sends whatever frames a test wants.
func keyholder(t *testing.T, addr, path string) *spec.Peer {
	t.Helper()
	keyFile, err := os.ReadFile(path)
	require.NoError(t, err)
	raw, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { raw.Close() })
	require.NoError(t, raw.SetDeadline(time.Now().Add(10*time.Second)))
	p, err := spec.Dial(raw, keyFile, "", 3, 0)
	require.NoError(t, err)
	require.NoError(t, raw.SetDeadline(time.Time{}))
	return p
}

// id is a stream frame's stream id field.
func id(n uint64) map[string]uint64 { return map[string]uint64{"stream_id": n} }

// TestMuxHostileKeyHolders: a key holder that breaks the rules of the
// multiplexed mode (a mode-1 frame in it, a stream overrunning its
// window, a stream opened twice or out of order, a frame for a stream
// never opened, a credit of nothing) loses its carrier, with one "carrier
// failed" line giving the reason; meanwhile an honest multiplexed client
// on another carrier is not disturbed, and no stream of a broken carrier
// outlives it.
func TestMuxHostileKeyHolders(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := startTarget(t, true)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.addr(), key, nil)
	connect := pipetest.MuxConnect(t, listen.Addr, key, nil)

	// An honest stream runs through all of it.
	honest := make(chan result, 1)
	go func() { honest <- echo(connect.Addr, 1<<40, pick(2<<20, 16<<20), true, time.Minute) }()

	over := make([]byte, mux.MinStreamWindow) // with the frame's charge, 64 bytes too many
	cases := []struct {
		name, reason string
		frames       func(p *spec.Peer) []byte
	}{
		{"a mode-1 data frame", "malformed_frame", func(p *spec.Peer) []byte { return p.Frame("data", []byte("x"), nil) }},
		{"window overrun", "mux_protocol", func(p *spec.Peer) []byte { return p.Frame("open", over, id(1)) }},
		{"stream opened twice", "mux_protocol", func(p *spec.Peer) []byte {
			return append(p.Frame("open", nil, id(1)), p.Frame("open", nil, id(1))...)
		}},
		{"stream opened out of order", "mux_protocol", func(p *spec.Peer) []byte { return p.Frame("open", nil, id(2)) }},
		{"a stream never opened", "mux_protocol", func(p *spec.Peer) []byte { return p.Frame("stream data", []byte("x"), id(7)) }},
		{"a credit of nothing", "mux_protocol", func(p *spec.Peer) []byte {
			return append(p.Frame("open", nil, id(1)), p.Frame("credit", nil, map[string]uint64{"stream_id": 1})...)
		}},
	}
	for _, tc := range cases {
		before := listen.Log.Count("carrier failed", "reason="+tc.reason)
		p := keyholder(t, listen.Addr, key)
		_, err := p.Conn.Write(tc.frames(p))
		require.NoError(t, err, tc.name)
		_ = p.Conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = io.Copy(io.Discard, p.Conn)
		assert.False(t, isTimeout(err), "%s: the listener kept the carrier open", tc.name)
		listen.Log.WaitCount(t, before+1, 10*time.Second, "carrier failed", "reason="+tc.reason)
	}
	r := <-honest
	assert.True(t, r.intact(), "the honest stream beside them: %v", r.err)
	assert.Equal(t, 1, connect.Log.Count("carrier open"), "the honest carrier was never lost")
}
