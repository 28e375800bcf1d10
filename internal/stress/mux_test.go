package stress

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/faultproxy"
	"github.com/spipe-dev/spipe/internal/service"
	"github.com/spipe-dev/spipe/internal/testutil/pipetest"
	"github.com/spipe-dev/spipe/pkg/spipe"
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

// yamuxMsg is a yamux message (docs/PROTOCOL.md 7.1).
func yamuxMsg(typ byte, flags uint16, stream, length uint32, data []byte) []byte {
	b := []byte{0, typ}
	b = binary.BigEndian.AppendUint16(b, flags)
	b = binary.BigEndian.AppendUint32(b, stream)
	b = binary.BigEndian.AppendUint32(b, length)
	return append(b, data...)
}

// TestMuxHostileKeyHolders: a key holder that breaks the multiplexing
// protocol (garbage instead of yamux, a stream overrunning its window, a
// stream opened twice, a stream id only a server may use) loses its
// carrier, with one "carrier failed" line giving the reason; meanwhile an
// honest multiplexed client on another carrier is not disturbed, and no
// stream of a broken carrier outlives it.
func TestMuxHostileKeyHolders(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := startTarget(t, true)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.addr(), key, nil)
	connect := pipetest.MuxConnect(t, listen.Addr, key, nil)
	cfg := clientConfig(t, key)
	cfg.Multiplex = true

	// An honest stream runs through all of it.
	honest := make(chan result, 1)
	go func() { honest <- echo(connect.Addr, 1<<40, pick(2<<20, 16<<20), true, time.Minute) }()

	over := make([]byte, mux.MinStreamWindow+1)
	cases := map[string][]byte{
		"garbage":         bytes.Repeat([]byte{0xff}, 64),
		"window overrun":  append(yamuxMsg(1, 1, 1, 0, nil), yamuxMsg(0, 0, 1, uint32(len(over)), over)...),
		"stream twice":    append(yamuxMsg(1, 1, 3, 0, nil), yamuxMsg(1, 1, 3, 0, nil)...),
		"server's stream": yamuxMsg(1, 1, 2, 0, nil),
	}
	for name, b := range cases {
		before := listen.Log.Count("carrier failed", "reason=mux_protocol")
		raw, err := net.Dial("tcp", listen.Addr)
		require.NoError(t, err, name)
		c := spipe.Client(raw, cfg)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		require.NoError(t, c.HandshakeContext(ctx), name)
		cancel()
		_, _ = c.Write(b)
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = io.Copy(io.Discard, c)
		assert.False(t, isTimeout(err), "%s: the listener kept the carrier open", name)
		c.Close()
		listen.Log.WaitCount(t, before+1, 10*time.Second, "carrier failed", "reason=mux_protocol")
	}
	r := <-honest
	assert.True(t, r.intact(), "the honest stream beside them: %v", r.err)
	assert.Equal(t, 1, connect.Log.Count("carrier open"), "the honest carrier was never lost")
}
