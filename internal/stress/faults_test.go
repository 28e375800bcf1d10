package stress

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/faultproxy"
	"github.com/spipe-dev/spipe/internal/service"
	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/pipetest"
)

// TestFaultAmongHealthyConnections runs a connect/listen pair with the
// fault proxy between them and several echo connections at once; one of
// them (the proxy's connection number conns/2) gets the fault. For each
// fault and direction: the tampered connection is counted by the
// receiving side as failed with the right reason (or, for a reset, as
// ended by it), the target (or client) never receives a byte
// that was not sent, in order, and every other connection completes with
// every byte intact.
func TestFaultAmongHealthyConnections(t *testing.T) {
	conns := pick(8, 32)
	size := pick(256<<10, 1<<20)
	key := pipetest.KeyFile(t)
	tg := startTarget(t, true)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.addr(), key, pipetest.WithMetrics)

	cases := faultCases(2)
	var ids uint64
	for _, tc := range cases {
		for _, dir := range []faultproxy.Direction{faultproxy.ClientToServer, faultproxy.ServerToClient} {
			t.Run(fmt.Sprintf("%s %s", tc.name, dir), func(t *testing.T) {
				f := tc.fault
				f.Dir = dir
				listenBefore := transferOutcomes(t, listen)
				results, connect, proxy := echoesThroughFault(t, listen.Addr, conns/2, f, func(addr string) *pipetest.Service {
					return pipetest.Start(t, service.Connect, "127.0.0.1:0", addr, key, pipetest.WithMetrics)
				}, conns, size, &ids)
				require.Len(t, proxy.Applied(), 1, "the fault never fired")

				var failed []result
				for _, r := range results {
					// Whatever happened, the echo is a prefix of what was sent.
					assert.True(t, bytes.HasPrefix(r.sent, r.got), "conn %d: echo differs from what was sent", r.id)
					rec := tg.waitRecord(t, r.id, 10*time.Second)
					assert.True(t, bytes.HasPrefix(r.sent, rec.got), "conn %d: target received bytes that were never sent", r.id)
					if r.intact() {
						assert.True(t, rec.clean, "conn %d: intact echo but the target saw %v", r.id, rec.err)
						assert.Equal(t, int64(size), rec.n)
						continue
					}
					failed = append(failed, r)
				}
				receiver, before := listen, listenBefore
				if dir == faultproxy.ServerToClient {
					receiver, before = connect, nil
				}
				if tc.reasons == nil {
					assert.Empty(t, failed, "a delay must not break a connection")
					assert.Empty(t, diff(transferOutcomes(t, listen), listenBefore, "failed:"))
					assert.Empty(t, diff(transferOutcomes(t, connect), nil, "failed:"))
					return
				}
				require.Len(t, failed, 1, "exactly the tampered connection fails")
				bad := failed[0]
				if dir == faultproxy.ClientToServer {
					// The cut stream must not look complete to the target.
					rec := tg.waitRecord(t, bad.id, 10*time.Second)
					assert.False(t, rec.clean, "target saw a clean end of a tampered stream")
					assert.Less(t, rec.n, int64(size))
				}
				// Counted, not looked for in the log: failure lines are
				// limited per source, and every connection here comes from
				// 127.0.0.1.
				want := []string{"end:" + tc.end}
				if tc.end == "" {
					want = nil
					for _, r := range tc.reasons {
						want = append(want, "failed:"+r)
					}
				}
				var got map[string]float64
				for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
					got = diff(transferOutcomes(t, receiver), before, "")
					if len(got) == 1 && slices.Contains(want, slices.Collect(maps.Keys(got))[0]) {
						break
					}
				}
				require.Len(t, got, 1, "want one of %v, have %v", want, got)
				for k, v := range got {
					assert.Contains(t, want, k)
					assert.Equal(t, 1.0, v, k)
				}
			})
		}
	}
}

// transferOutcomes returns the ends ("end:HOW") and transfer failures
// ("failed:REASON") s has counted, leaving out series at zero and
// connections that ended in order.
func transferOutcomes(t *testing.T, s *pipetest.Service) map[string]float64 {
	t.Helper()
	got := map[string]float64{}
	for line := range strings.SplitSeq(pipetest.Scrape(t, s.MetricsAddr()), "\n") {
		var key string
		switch {
		case strings.HasPrefix(line, "spipe_connection_ends_total{"):
			key = "end:" + between(line, `how="`, `"`)
		case strings.HasPrefix(line, "spipe_transfer_failures_total{"):
			key = "failed:" + between(line, `reason="`, `"`)
		default:
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		require.NoError(t, err, line)
		if v != 0 && key != "end:closed" {
			got[key] = v
		}
	}
	return got
}

// between returns what follows start in s up to end.
func between(s, start, end string) string {
	_, s, _ = strings.Cut(s, start)
	s, _, _ = strings.Cut(s, end)
	return s
}

// diff returns the counts of now that grew since before, by how much,
// keeping only the keys that start with prefix.
func diff(now, before map[string]float64, prefix string) map[string]float64 {
	d := map[string]float64{}
	for k, v := range now {
		if strings.HasPrefix(k, prefix) && v > before[k] {
			d[k] = v - before[k]
		}
	}
	return d
}

// faultCase is a fault of the fault-proxy suites, on frame number frame
// of its direction, with the reasons the side receiving it may fail with
// (none: nothing breaks), or how the connection ends there (a plain
// connection; a carrier fails with one of reasons).
type faultCase struct {
	name    string
	fault   faultproxy.Fault
	reasons []string
	end     string
}

func faultCases(frame int) []faultCase {
	return []faultCase{
		{"flip payload bit", faultproxy.Fault{Kind: faultproxy.FlipBit, Frame: frame, Bit: 8 * 20}, []string{"tampered"}, ""},
		// The length's low bit: a full frame grows past the limit, any
		// other frame fails its tag.
		{"flip header bit", faultproxy.Fault{Kind: faultproxy.FlipBit, Frame: frame, Bit: 2 * 8}, []string{"tampered", "frame_too_large"}, ""},
		{"oversize length", faultproxy.Fault{Kind: faultproxy.FlipBit, Frame: frame, Bit: 7}, []string{"frame_too_large"}, ""},
		{"drop", faultproxy.Fault{Kind: faultproxy.Drop, Frame: frame}, []string{"tampered"}, ""},
		{"duplicate", faultproxy.Fault{Kind: faultproxy.Duplicate, Frame: frame}, []string{"tampered"}, ""},
		{"reorder", faultproxy.Fault{Kind: faultproxy.Reorder, Frame: frame}, []string{"tampered"}, ""},
		{"truncate", faultproxy.Fault{Kind: faultproxy.Truncate, Frame: frame, Keep: 10}, []string{"truncated"}, ""},
		// After an RST Linux reports ECONNRESET once, to whichever call
		// meets it first; a read after a failed write sees a plain end
		// (a carrier then fails as truncated).
		{"reset", faultproxy.Fault{Kind: faultproxy.Reset, Frame: frame}, []string{"reset", "truncated"}, "reset"},
		{"delay", faultproxy.Fault{Kind: faultproxy.Delay, Frame: frame, Delay: 300 * time.Millisecond}, nil, ""},
	}
}

// echoesThroughFault puts a fault proxy in front of listenAddr that gives
// its connection number faulted the fault f, starts a connect to it with
// start, and runs n echoes of size bytes through it at once (their ids
// counted on from *ids). The proxy and connect close with the test.
func echoesThroughFault(t *testing.T, listenAddr string, faulted int, f faultproxy.Fault,
	start func(addr string) *pipetest.Service, n, size int, ids *uint64) ([]result, *pipetest.Service, *faultproxy.Proxy) {
	t.Helper()
	proxy, err := faultproxy.Start(listenAddr, func(c int) []faultproxy.Fault {
		if c == faulted {
			return []faultproxy.Fault{f}
		}
		return nil
	})
	require.NoError(t, err)
	t.Cleanup(func() { proxy.Close() })
	connect := start(proxy.Addr())
	results := make([]result, n)
	var wg sync.WaitGroup
	for i := range n {
		*ids++
		id := *ids
		wg.Add(1)
		go func() { defer wg.Done(); results[i] = echo(connect.Addr, id, size, true, time.Minute) }()
	}
	wg.Wait()
	return results, connect, proxy
}

// waitReason waits up to 10 s for a line of l holding every one of subs
// and "reason=" one of reasons, and fails the test if none comes.
func waitReason(t *testing.T, l *testutil.Log, reasons []string, subs ...string) {
	t.Helper()
	logged := func() bool {
		for _, r := range reasons {
			if l.Count(slices.Concat(subs, []string{"reason=" + r})...) > 0 {
				return true
			}
		}
		return false
	}
	// Polled by hand, not with assert.Eventually, so that the message
	// shows the log as it is at the end.
	for deadline := time.Now().Add(10 * time.Second); !logged() && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	assert.True(t, logged(), "log lacks %q with reason %v:\n%s", subs, reasons, testutil.Tail(l.String(), 20))
}
