package stress

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/service"
	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/pipetest"
)

// TestLoad pushes many concurrent connections, each echoing size bytes
// both ways, through one connect/listen pair whose --max-conns equals the
// connection count: every echo must come back intact, and afterwards no
// goroutine or file descriptor may be left. The long form is the issue's
// 1,000 connections of 1 MiB; it reports peak RSS per connection.
func TestLoad(t *testing.T) { loadTest(t, false) }

// TestMuxLoad is TestLoad through the multiplexed mode: every connection
// a stream of one carrier (the long form: 1,000 streams of 1 MiB each way
// at once, checksummed at the client and at the target).
func TestMuxLoad(t *testing.T) { loadTest(t, true) }

func loadTest(t *testing.T, muxed bool) {
	conns := pick(100, 1000)
	size := pick(256<<10, 1<<20)
	key := pipetest.KeyFile(t)
	tg := startTarget(t, false)
	maxConns := func(o *service.Options) {
		o.MaxConns = conns
		o.HandshakeTimeout = 60 * time.Second
		o.Mux = muxed && o.Mode == service.Connect
	}
	listen, connect := pipetest.Pair(t, tg.addr(), key, maxConns)
	if muxed {
		connect.Log.WaitCount(t, 1, 10*time.Second, `msg="carrier open"`)
	}

	// Earlier tests in this process grew the heap; hand that memory back
	// so the RSS figures are this test's.
	debug.FreeOSMemory()
	goroutines, fds := runtime.NumGoroutine(), countFDs(t)
	rssBefore := procStatus(t, "VmRSS")
	resetPeakRSS()

	var inFlight, peak atomic.Int64
	results := make([]streamResult, conns)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := inFlight.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			results[i] = streamEcho(connect.Addr, uint64(i+1), size, 10*time.Minute)
			inFlight.Add(-1)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	peakRSS := procStatus(t, "VmHWM")

	bad := 0
	for _, r := range results {
		if r.err != nil || r.got != r.sent {
			bad++
			if bad <= 5 {
				t.Errorf("conn %d: %d of %d bytes back, err %v, hash match %v", r.id, r.n, size, r.err, r.got == r.sent)
			}
			continue
		}
		rec := tg.waitRecord(t, r.id, 30*time.Second)
		assert.True(t, rec.clean && rec.n == int64(size) && rec.sum == r.sent,
			"conn %d: the target saw %d bytes, clean %v, hash match %v", r.id, rec.n, rec.clean, rec.sum == r.sent)
	}
	require.Zero(t, bad, "%d of %d connections failed", bad, conns)
	assert.Zero(t, listen.Log.Count("connection failed")+connect.Log.Count("connection failed"))
	if muxed {
		assert.Equal(t, 1, listen.Log.Count(`msg="carrier opened"`), "one carrier carried every stream")
	}
	t.Logf("%d connections x %d KiB both ways in %v (%.0f MB/s of echoed plaintext), %d at once at the peak",
		conns, size>>10, elapsed.Round(time.Millisecond), float64(2*conns*size)/elapsed.Seconds()/1e6, peak.Load())
	t.Logf("RSS %d MiB before, peak %d MiB: %.0f KiB per connection (this process holds both spipe ends, the clients and the target)",
		rssBefore>>10, peakRSS>>10, float64(peakRSS-rssBefore)/float64(conns))

	// Leaks: every goroutine and descriptor the connections used is gone.
	deadline := time.Now().Add(30 * time.Second)
	for (runtime.NumGoroutine() > goroutines || countFDs(t) > fds) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("goroutines %d before, %d after; fds %d before, %d after", goroutines, runtime.NumGoroutine(), fds, countFDs(t))
	assert.LessOrEqual(t, runtime.NumGoroutine(), goroutines, "goroutines leaked")
	assert.LessOrEqual(t, countFDs(t), fds, "file descriptors leaked")
}

// streamResult is a streamed echo's outcome: hashes instead of bytes, so
// a thousand connections do not hold their data in memory.
type streamResult struct {
	id        uint64
	sent, got [32]byte
	n         int64
	err       error
}

// streamEcho is echo for large counts: the stream (id, then pseudo-random
// bytes) is generated and hashed as it is written.
func streamEcho(addr string, id uint64, size int, timeout time.Duration) streamResult {
	res := streamResult{id: id}
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		res.err = err
		return res
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	wrote := make(chan error, 1)
	go func() {
		h := sha256.New()
		r := rand.NewChaCha8([32]byte{byte(id), byte(id >> 8), 2})
		buf := make([]byte, 32<<10)
		var err error
		for left := size; left > 0 && err == nil; {
			b := buf[:min(left, len(buf))]
			r.Read(b)
			if left == size {
				binary.BigEndian.PutUint64(b, id)
			}
			h.Write(b)
			_, err = c.Write(b)
			left -= len(b)
		}
		if err == nil {
			err = c.(*net.TCPConn).CloseWrite()
		}
		copy(res.sent[:], h.Sum(nil))
		wrote <- err
	}()
	h := sha256.New()
	res.n, res.err = io.CopyBuffer(h, c, make([]byte, 32<<10))
	if res.err != nil {
		c.Close()
	}
	if werr := <-wrote; res.err == nil {
		res.err = werr
	}
	copy(res.got[:], h.Sum(nil))
	return res
}

func countFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(ents)
}

// procStatus returns a "kB" field of /proc/self/status, in KiB.
func procStatus(t *testing.T, field string) int64 {
	t.Helper()
	return statusField(t, "/proc/self/status", field)
}

// statusField returns a "kB" field of a /proc/PID/status file, in KiB.
func statusField(t *testing.T, path, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("no %s in %s", field, path)
	return 0
}

// resetPeakRSS makes VmHWM start again from the current RSS (Linux's
// clear_refs "5"), so the peak is this test's.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// TestLoadProcesses is TestLoad through the built tool: "spipe connect"
// and "spipe listen" as processes with --max-conns equal to the connection
// count. Each process's peak RSS per connection comes from its VmHWM, and
// its goroutines and open descriptors, before and after, from its own
// metrics endpoint.
func TestLoadProcesses(t *testing.T) {
	conns := pick(100, 1000)
	size := pick(256<<10, 1<<20)
	bin := spipeBinary(t)
	key := pipetest.KeyFile(t)
	tg := startTarget(t, false)

	lp, cp := pipetest.FreeAddr(t), pipetest.FreeAddr(t)
	listen := startProc(t, bin, "listen", "-s", lp, "-t", tg.addr(), "-k", key, "--max-conns", strconv.Itoa(conns))
	connect := startProc(t, bin, "connect", "-s", cp, "-t", lp, "-k", key, "--max-conns", strconv.Itoa(conns))
	procs := []*proc{listen, connect}
	for _, p := range procs {
		p.before = p.sample(t)
		p.resetPeak()
	}

	results := make([]streamResult, conns)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range conns {
		wg.Add(1)
		go func() { defer wg.Done(); results[i] = streamEcho(cp, uint64(i+1), size, 10*time.Minute) }()
	}
	wg.Wait()
	elapsed := time.Since(start)
	bad := 0
	for _, r := range results {
		if r.err != nil || r.got != r.sent {
			bad++
		}
	}
	require.Zero(t, bad, "%d of %d connections failed", bad, conns)
	t.Logf("%d connections x %d KiB both ways through the spipe processes in %v", conns, size>>10, elapsed.Round(time.Millisecond))
	for _, p := range procs {
		peak := p.status(t, "VmHWM")
		deadline := time.Now().Add(30 * time.Second)
		after := p.sample(t)
		for (after.goroutines > p.before.goroutines || after.fds > p.before.fds) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			after = p.sample(t)
		}
		t.Logf("spipe %s: RSS %d MiB idle, peak %d MiB: %.0f KiB per connection; goroutines %d before, %d after; fds %d before, %d after",
			p.mode, p.before.rss>>10, peak>>10, float64(peak-p.before.rss)/float64(conns),
			p.before.goroutines, after.goroutines, p.before.fds, after.fds)
		// The process's own account agrees: every connection, every byte.
		m, err := p.scrape()
		require.NoError(t, err)
		label := fmt.Sprintf(`mode=%q`, p.mode)
		assert.Equal(t, float64(conns), m["spipe_connections_total{"+label+"}"], "spipe %s connections", p.mode)
		assert.Zero(t, m["spipe_connections_open{"+label+"}"], "spipe %s open connections", p.mode)
		for _, dir := range []string{"to_target", "from_target"} {
			assert.Equal(t, float64(conns*size), m[fmt.Sprintf(`spipe_bytes_total{direction=%q,%s}`, dir, label)],
				"spipe %s bytes %s", p.mode, dir)
		}
		assert.LessOrEqual(t, after.goroutines, p.before.goroutines, "spipe %s leaked goroutines", p.mode)
		assert.LessOrEqual(t, after.fds, p.before.fds, "spipe %s leaked file descriptors", p.mode)
		assert.NotContains(t, p.log.String(), "connection failed")
	}
}

// proc is a running spipe with a metrics endpoint.
type proc struct {
	mode, metrics string
	cmd           *exec.Cmd
	log           *testutil.Log
	before        sample
}

type sample struct {
	goroutines, fds int
	rss             int64 // KiB
}

func startProc(t *testing.T, bin, mode string, args ...string) *proc {
	t.Helper()
	p := &proc{mode: mode, metrics: pipetest.FreeAddr(t), log: &testutil.Log{}}
	p.cmd = exec.Command(bin, append([]string{mode, "--metrics", p.metrics, "--log-level", "warn"}, args...)...)
	p.cmd.Stderr = p.log
	require.NoError(t, p.cmd.Start())
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = p.cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := p.scrape(); err == nil {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("spipe %s did not start:\n%s", mode, p.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// scrape reads the process's metrics (one connection, closed after).
func (p *proc) scrape() (map[string]float64, error) {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + p.metrics + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	m := map[string]float64{}
	for line := range strings.SplitSeq(string(body), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			m[name] = v
		}
	}
	return m, nil
}

func (p *proc) sample(t *testing.T) sample {
	t.Helper()
	m, err := p.scrape()
	require.NoError(t, err)
	return sample{goroutines: int(m["go_goroutines"]), fds: int(m["process_open_fds"]), rss: p.status(t, "VmRSS")}
}

// status returns a "kB" field of the process's /proc status, in KiB.
func (p *proc) status(t *testing.T, field string) int64 {
	t.Helper()
	return statusField(t, fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid), field)
}

func (p *proc) resetPeak() {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", p.cmd.Process.Pid), []byte("5"), 0)
}
