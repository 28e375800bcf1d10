package stress

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
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
// (The listener's "carrier failed" lines are limited per source, as
// failure lines are: its failures are read from its metrics.)
func TestMuxFaults(t *testing.T) {
	streams := pick(8, 32)
	size := pick(256<<10, 1<<20)
	key := pipetest.KeyFile(t)
	tg := startTarget(t, true)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.addr(), key, pipetest.WithMetrics)
	cases := faultCases(6)
	var ids uint64 = 1 << 32
	for _, tc := range cases {
		for _, dir := range []faultproxy.Direction{faultproxy.ClientToServer, faultproxy.ServerToClient} {
			t.Run(fmt.Sprintf("%s %s", tc.name, dir), func(t *testing.T) {
				f := tc.fault
				f.Dir = dir
				// The last case's carriers end at the listener once their
				// streams have: their failures are counted before this
				// case's figures are taken, or they would be this case's.
				require.Eventually(t, func() bool { return listen.Metric(t, `spipe_carriers_open{mode="listen"}`) == 0 },
					20*time.Second, 20*time.Millisecond, "the last case's carriers are still open at the listener")
				listenCarrierFailures := carrierFailureCount(t, listen, nil)
				listenFailuresOfCase := carrierFailureCount(t, listen, tc.reasons)
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
					assert.Equal(t, listenCarrierFailures, carrierFailureCount(t, listen, nil))
					assert.Zero(t, connect.Log.Count("carrier lost"))
					return
				}
				assert.NotZero(t, failed, "no stream was on the faulted carrier")
				if dir == faultproxy.ServerToClient {
					waitReason(t, connect.Log, tc.reasons, "carrier lost")
				} else {
					assert.Eventually(t, func() bool { return carrierFailureCount(t, listen, tc.reasons) > listenFailuresOfCase },
						10*time.Second, 20*time.Millisecond, "the listener counted no carrier failure with reason %v (it has %v failures)",
						tc.reasons, carrierFailureCount(t, listen, nil))
				}
				// The next stream opens on a new carrier and is intact.
				ids++
				r := echo(connect.Addr, ids, size, true, time.Minute)
				assert.True(t, r.intact(), "a stream after the fault: %v", r.err)
			})
		}
	}
}

// carrierFailureCount returns how many carriers s (a listener serving
// metrics) counted as failed with one of reasons (nil: any).
func carrierFailureCount(t *testing.T, s *pipetest.Service, reasons []string) float64 {
	t.Helper()
	var n float64
	for line := range strings.SplitSeq(pipetest.Scrape(t, s.MetricsAddr()), "\n") {
		if !strings.HasPrefix(line, "spipe_carrier_failures_total{") ||
			reasons != nil && !slices.Contains(reasons, between(line, `reason="`, `"`)) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		require.NoError(t, err, line)
		n += v
	}
	return n
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
// never opened, an open after its own go-away) loses its carrier, counted as a
// carrier failure with the reason (its lines are limited per source, as
// failure lines are); meanwhile an honest multiplexed client
// on another carrier is not disturbed, and no stream of a broken carrier
// outlives it.
func TestMuxHostileKeyHolders(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := startTarget(t, true)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.addr(), key, pipetest.WithMetrics)
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
		{"an open after the client's go-away", "mux_protocol", func(p *spec.Peer) []byte {
			wire := append(p.Frame("open", nil, id(1)), p.Frame("go-away", nil, map[string]uint64{"last_stream_id": 0})...)
			return append(wire, p.Frame("open", nil, id(2))...)
		}},
	}
	for _, tc := range cases {
		before := carrierFailureCount(t, listen, []string{tc.reason})
		p := keyholder(t, listen.Addr, key)
		_, err := p.Conn.Write(tc.frames(p))
		require.NoError(t, err, tc.name)
		_ = p.Conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = io.Copy(io.Discard, p.Conn)
		assert.False(t, isTimeout(err), "%s: the listener kept the carrier open", tc.name)
		assert.Eventually(t, func() bool { return carrierFailureCount(t, listen, []string{tc.reason}) == before+1 },
			10*time.Second, 20*time.Millisecond, "%s: no carrier failure counted with reason %s", tc.name, tc.reason)
	}
	r := <-honest
	assert.True(t, r.intact(), "the honest stream beside them: %v", r.err)
	assert.Equal(t, 1, connect.Log.Count("carrier open"), "the honest carrier was never lost")
}
