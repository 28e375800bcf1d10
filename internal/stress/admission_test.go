package stress

import (
	"errors"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/service"
	"github.com/spipe-dev/spipe/internal/testutil/pipetest"
	"github.com/spipe-dev/spipe/pkg/spipe"
)

// honestWithin is issue 14's bound: an honest client behind a flood
// completes its handshake and an echo within this.
const honestWithin = 3 * time.Second

// TestFloodCannotLockOut is the proof of the listener's admission
// promise: while thousands of connections from other addresses stall in
// their handshake (idle, or sending one byte a second), an honest client
// from 127.0.0.1 completes a real handshake and a 1 KiB echo within 3 s,
// every time it tries, during the flood and after it; the listener never
// holds more than --max-pending of the stalled connections open; and it
// logs what it cuts at DEBUG, not as warnings. The flood comes from one
// address, from 32, or from one address per socket. The long form floods
// 6,000 sockets against the default table (1,024 places, 128 per
// source); the short form 2,000 against a table of 64, where one source
// fills the table and the full-table eviction runs on every honest
// arrival.
func TestFloodCannotLockOut(t *testing.T) {
	n := pick(2000, 6000)
	maxPending := pick(64, 0) // 0: the default, 1024
	for _, tc := range []struct {
		name    string
		sources int  // distinct addresses the flood comes from: 127.0.0.2 and up
		drip    bool // every flood socket sends one byte a second
	}{
		{"idle", 1, false},
		{"one byte a second", 1, true},
		// 32 sources at the per-source cap fill the default table, so
		// the long form runs the full-table eviction too.
		{"idle from 32 addresses", 32, false},
		// One address per socket: every source holds one place at most,
		// so the table cuts oldest first, and only the honest client's
		// first message, in as soon as it connects, keeps it from being
		// cut.
		{"idle from as many addresses", n, false},
	} {
		t.Run(tc.name, func(t *testing.T) { floodTest(t, n, maxPending, tc.sources, tc.drip) })
	}
}

func floodTest(t *testing.T, n, maxPending, sources int, drip bool) {
	key := pipetest.KeyFile(t)
	cfg := clientConfig(t, key)
	tg := startTarget(t, false)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.addr(), key, func(o *service.Options) {
		o.MaxPending = maxPending
		o.HandshakeTimeout = 10 * time.Second // the default: what the flood used to exploit
		pipetest.WithMetrics(o)
	})
	table := maxPending
	if table == 0 {
		table = 1024
	}
	baseline := latencies(t, 5, listen.Addr, cfg)
	fdsBefore := countFDs(t)

	f := startFlood(t, listen.Addr, n, sources, drip)
	// Honest clients start once the flood is well under way and keep
	// coming, one after another, until it has dialled every socket, and
	// then past the first-message deadline while its last sockets sit in
	// the table.
	require.Eventually(t, func() bool { return f.opened.Load() >= int64(n/4) }, 30*time.Second, time.Millisecond,
		"the flood did not get going")
	var dialling, after []time.Duration
	serverFDs := 0
	measure := func(into *[]time.Duration) {
		d, err := honest(listen.Addr, cfg)
		require.NoError(t, err, "an honest client failed under the flood")
		*into = append(*into, d)
		// What the listener holds beyond the flood's own sockets (read
		// after the count, so never more than it was then).
		fds := countFDs(t)
		serverFDs = max(serverFDs, fds-fdsBefore-int(f.opened.Load()))
	}
	for done := false; !done; {
		select {
		case <-f.dialled:
			done = true
		default:
			measure(&dialling)
		}
	}
	for end := time.Now().Add(firstMessageDeadline + time.Second); time.Now().Before(end); {
		measure(&after)
		time.Sleep(50 * time.Millisecond)
	}
	floodOpened, floodCut, floodFailed := f.opened.Load(), f.cutEarly.Load(), f.failed.Load()

	require.NotEmpty(t, dialling, "no honest client ran while the flood was dialling")
	slices.Sort(dialling)
	slices.Sort(after)
	t.Logf("%d flood sockets from %d address(es) (%d more cut before their dial returned), drip=%v, table %d", floodOpened, sources, floodCut, drip, table)
	t.Logf("honest client: baseline median %v; while the flood dialled %d runs, median %v, max %v; after it, %d runs, median %v, max %v; the listener held at most %d sockets",
		median(baseline), len(dialling), median(dialling), slices.Max(dialling), len(after), median(after), slices.Max(after), serverFDs)
	assert.Less(t, max(slices.Max(dialling), slices.Max(after)), honestWithin, "an honest client waited behind the flood")
	// The table bounds what the flood costs in file descriptors; the slack
	// is the honest client's sockets and dials in flight at the count.
	assert.LessOrEqual(t, serverFDs, table+32, "the listener held more stalled sockets than --max-pending")
	f.mu.Lock()
	assert.Zero(t, floodFailed, "flood dials the listener did not accept (it must never stop accepting); last: %v", f.err)
	f.mu.Unlock()
	assert.Equal(t, int64(n), floodOpened+floodCut+floodFailed)

	// Before the flood's sockets close: the listener counts those as the
	// failures they are, and logs them (each source's lines up to the
	// rate limit) at DEBUG, never as warnings.
	for _, reason := range []string{"evicted", "hello_timeout"} {
		require.Eventually(t, func() bool { return handshakeFailures(t, listen, reason) >= 1 },
			5*time.Second, 20*time.Millisecond, "no handshake failure counted as %s", reason)
	}
	l := listen.Log
	l.WaitCount(t, 1, 5*time.Second, "level=DEBUG", `msg="connection failed"`, "stage=handshake")
	assert.Zero(t, l.Count("level=WARN", `msg="connection failed"`), "a cut handshake was logged as a warning")
	assert.Positive(t, l.Count("level=WARN", `msg="pending handshakes cut to admit new connections"`))
	f.stop()
}

// handshakeFailures is the listener's count of handshakes that failed for
// reason.
func handshakeFailures(t *testing.T, listen *pipetest.Service, reason string) float64 {
	t.Helper()
	return listen.Metric(t, `spipe_handshake_failures_total{mode="listen",reason="`+reason+`"}`)
}

// median is the middle of d, which is sorted; 0 if d is empty.
func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[len(d)/2]
}

// flood holds many connections that never complete a handshake.
type flood struct {
	opened   atomic.Int64
	cutEarly atomic.Int64  // reset before the dial returned
	failed   atomic.Int64  // not accepted
	dialled  chan struct{} // closed when every dial has returned
	quit     chan struct{}
	wg       sync.WaitGroup

	mu    sync.Mutex
	conns []net.Conn
	err   error // the last failed dial's
}

// startFlood dials n connections to addr from 127.0.0.2 and up (sources
// addresses, round robin: see floodAddr), as fast as 8 dialers go, and keeps them open
// until stop. With drip, each sends a ClientHello one byte a second.
func startFlood(t *testing.T, addr string, n, sources int, drip bool) *flood {
	f := &flood{dialled: make(chan struct{}), quit: make(chan struct{})}
	var next atomic.Int64
	var dialers sync.WaitGroup
	for range 8 {
		dialers.Add(1)
		go func() {
			defer dialers.Done()
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				d := net.Dialer{
					LocalAddr: &net.TCPAddr{IP: floodAddr(int(i) % sources)},
					Timeout:   5 * time.Second,
				}
				c, err := d.Dial("tcp", addr)
				if errors.Is(err, syscall.ECONNRESET) {
					// Accepted, and cut before this dial returned.
					f.cutEarly.Add(1)
					continue
				}
				if err != nil {
					f.failed.Add(1)
					f.mu.Lock()
					f.err = err
					f.mu.Unlock()
					continue
				}
				f.mu.Lock()
				f.conns = append(f.conns, c)
				f.mu.Unlock()
				f.opened.Add(1)
			}
		}()
	}
	f.wg.Add(1)
	go func() { defer f.wg.Done(); dialers.Wait(); close(f.dialled) }()
	if drip {
		f.wg.Add(1)
		go func() { defer f.wg.Done(); f.drip() }()
	}
	t.Cleanup(f.stop)
	return f
}

// floodAddr is the flood's i-th loopback address: 127.0.0.2 to
// 127.0.0.251, then 127.0.1.2 and on, never 127.0.0.1.
func floodAddr(i int) net.IP {
	return net.IPv4(127, 0, byte(i/250), byte(2+i%250))
}

// drip writes the next byte of a ClientHello (the version, then zeros) to
// every open flood socket once a second; a socket the listener has cut
// fails its write and is left alone after that.
func (f *flood) drip() {
	sent := map[net.Conn]int{}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		f.mu.Lock()
		conns := slices.Clone(f.conns)
		f.mu.Unlock()
		for _, c := range conns {
			i, ok := sent[c]
			if i < 0 {
				continue
			}
			b := byte(0)
			if !ok {
				b = spipe.Version
			}
			_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			if _, err := c.Write([]byte{b}); err != nil {
				sent[c] = -1
				continue
			}
			sent[c] = i + 1
		}
		select {
		case <-tick.C:
		case <-f.quit:
			return
		}
	}
}

// stop waits for the dialers and closes every flood socket.
func (f *flood) stop() {
	select {
	case <-f.quit:
		return
	default:
	}
	close(f.quit)
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		c.Close()
	}
}
