package lbtest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pires/go-proxyproto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/pipetest"
	"github.com/spipe-dev/spipe/pkg/spipe"
)

// The loopback addresses of the pieces: every one of 127.0.0.0/8 is this
// host on Linux, so each gets one of its own.
const (
	honestIP   = "127.0.0.1" // a client, and where every server listens
	floodIP    = "127.0.0.2" // a client that floods
	balancerIP = "127.0.0.3" // HAProxy's side toward the listeners
)

// spipeBin returns the spipe binary make e2e built; without one the test
// is not run here. SPIPE_HAPROXY names haproxy (default: Debian's).
func spipeBin(t *testing.T) string {
	bin := os.Getenv("SPIPE_E2E_BIN")
	if bin == "" {
		t.Skip("make e2e runs this test (SPIPE_E2E_BIN names the spipe binary to run)")
	}
	return bin
}

// proc is a program the test started: its output is collected, and the
// test's cleanup stops it.
type proc struct {
	cmd  *exec.Cmd
	log  *testutil.Log
	done chan struct{}
}

func start(t *testing.T, env []string, name string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(name, args...), log: &testutil.Log{}, done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	require.NoError(t, p.cmd.Start(), name)
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(100 * time.Millisecond):
			// A listener drains for its --drain-delay first: a second
			// SIGTERM stops it at once, as it would an operator's.
			p.cmd.Process.Signal(syscall.SIGTERM)
		}
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("%s:\n%s", strings.Join(p.cmd.Args, " "), testutil.Tail(p.log.String(), 60))
		}
	})
	return p
}

// exitCode waits for p to exit.
func (p *proc) exitCode(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(within):
		t.Fatalf("%s did not exit within %v", p.cmd.Args[0], within)
		return -1
	}
}

// stack is HAProxy in front of two spipe listeners in front of a target
// that reads the listeners' PROXY headers.
type stack struct {
	key       *spipe.Key
	frontend  string
	listeners [2]*proc
	metrics   [2]string
	haproxy   *proc
	// sources holds what the target's PROXY header named as each
	// connection's source.
	mu      sync.Mutex
	sources []string
}

// startStack starts the target, the listeners and HAProxy, with the
// client's address passed in PROXY headers (proxied) or not, and returns
// once a client gets an echo through it. The listeners always send a
// PROXY header to the target, naming whom they take for the client.
func startStack(t *testing.T, proxied bool) *stack {
	t.Helper()
	return startStackWith(t, proxied, nil)
}

// startStackWith is startStack with HAProxy's configuration changed by
// edit (nil: as contrib/haproxy has it).
func startStackWith(t *testing.T, proxied bool, edit func(t *testing.T, cfg string) string) *stack {
	t.Helper()
	bin := spipeBin(t)
	haproxy := os.Getenv("SPIPE_HAPROXY")
	if haproxy == "" {
		haproxy = "/usr/sbin/haproxy" // Debian's, off a user's PATH
	}
	_, err := exec.LookPath(haproxy)
	require.NoError(t, err, "make e2e installs haproxy (E2E_TOOLS)")
	raiseFileLimit(t)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	out, err := exec.Command(bin, "keygen", keyFile).CombinedOutput()
	require.NoError(t, err, "%s", out)
	s := &stack{}
	s.key, err = spipe.LoadKeyFile(keyFile)
	require.NoError(t, err)

	target := pipetest.NewTarget(t, func(c net.Conn) {
		r := bufio.NewReader(c)
		h, err := proxyproto.Read(r)
		if err != nil {
			return
		}
		s.mu.Lock()
		s.sources = append(s.sources, h.SourceAddr.String())
		s.mu.Unlock()
		io.Copy(c, r)
		c.(*net.TCPConn).CloseWrite()
	})
	var env []string
	for i := range s.listeners {
		addr, metrics := pipetest.FreeAddr(t), pipetest.FreeAddr(t)
		args := []string{"listen", "-s", addr, "-t", target.Addr, "-k", keyFile, "--metrics", metrics,
			"--proxy-protocol", "--shutdown-timeout", "10s"}
		if proxied {
			args = append(args, "--accept-proxy-from", balancerIP)
		}
		s.listeners[i], s.metrics[i] = start(t, nil, bin, args...), metrics
		_, port, _ := net.SplitHostPort(metrics)
		env = append(env, fmt.Sprintf("SPIPE_LISTEN%d=%s", i+1, addr), fmt.Sprintf("SPIPE_HEALTH%d=%s", i+1, port))
		s.listeners[i].log.Wait(t, `msg=serving`, s.listeners[i].done)
	}
	cfg, err := os.ReadFile("../../contrib/haproxy/haproxy.cfg")
	require.NoError(t, err)
	if !proxied {
		// The same balancer without PROXY headers: every connection
		// comes from its address.
		const send = "send-proxy-v2 proxy-v2-options crc32c "
		require.Contains(t, string(cfg), send)
		cfg = []byte(strings.ReplaceAll(string(cfg), send, ""))
	}
	if edit != nil {
		cfg = []byte(edit(t, string(cfg)))
	}
	cfgFile := filepath.Join(dir, "haproxy.cfg")
	require.NoError(t, os.WriteFile(cfgFile, cfg, 0o644))
	s.frontend = pipetest.FreeAddr(t)
	env = append(env, "SPIPE_FRONTEND="+s.frontend, "SPIPE_LB_SOURCE="+balancerIP)
	s.haproxy = start(t, env, haproxy, "-db", "-f", cfgFile)
	require.Eventually(t, func() bool { _, err := s.echo(honestIP, "up?"); return err == nil },
		20*time.Second, 100*time.Millisecond, "no echo through HAProxy; its log:\n%s", s.haproxy.log.String())
	return s
}

// raiseFileLimit lets this process and the programs it starts hold the
// flood's sockets: Go raises its own limit, but gives its children the
// one it started with unless the program sets it.
func raiseFileLimit(t *testing.T) {
	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	lim.Cur = lim.Max
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim))
}

// echo runs one spipe connection from the loopback address from through
// HAProxy and returns the local address it used.
func (s *stack) echo(from, msg string) (net.Addr, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d := &spipe.Dialer{
		Config:    &spipe.Config{Keys: []*spipe.Key{s.key}},
		NetDialer: &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}},
	}
	nc, err := d.DialContext(ctx, "tcp", s.frontend)
	if err != nil {
		return nil, err
	}
	c := nc.(*spipe.Conn)
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(msg)); err != nil {
		return nil, err
	}
	if err := c.CloseWrite(); err != nil {
		return nil, err
	}
	got, err := io.ReadAll(c)
	if err != nil {
		return nil, err
	}
	if string(got) != msg {
		return nil, fmt.Errorf("echo: got %q, want %q", got, msg)
	}
	return c.LocalAddr(), nil
}

// metric reads one series from listener i.
func (s *stack) metric(t *testing.T, i int, series string) float64 {
	return pipetest.Metric(pipetest.Scrape(t, s.metrics[i]), series)
}

// TestHAProxySpreadsAndNamesTheClient: connections through HAProxy go to
// both listeners, and the target learns each client's own address and
// port from the listener's PROXY header.
func TestHAProxySpreadsAndNamesTheClient(t *testing.T) {
	s := startStack(t, true)
	const n = 20
	const total = `spipe_connections_total{mode="listen"}`
	before := [2]float64{s.metric(t, 0, total), s.metric(t, 1, total)}
	var want []string
	for i := range n {
		local, err := s.echo(honestIP, fmt.Sprint("spread ", i))
		require.NoError(t, err)
		want = append(want, local.String())
	}
	s.mu.Lock()
	got := slices.Clone(s.sources)
	s.mu.Unlock()
	assert.Subset(t, got, want, "the target did not see the clients' own addresses")
	for _, src := range got {
		assert.NotContains(t, src, balancerIP, "the target was told the balancer's address")
	}
	var sum float64
	for i := range s.listeners {
		c := s.metric(t, i, total) - before[i]
		assert.Positive(t, c, "listener %d got no connection", i+1)
		sum += c
	}
	assert.Equal(t, float64(n), sum, "connections counted by the listeners")
	assert.Zero(t, s.metric(t, 0, `spipe_handshake_failures_total{mode="listen",reason="proxy_header"}`)+
		s.metric(t, 1, `spipe_handshake_failures_total{mode="listen",reason="proxy_header"}`),
		"HAProxy's PROXY headers (with their CRC32C) were refused")
}

// TestHAProxyFlood: one client address opens connections through
// HAProxy as fast as it can for a few seconds, keeping up to 2,000 open;
// another client echoes meanwhile and after. With the balancer trusted,
// each listener counts the flood against the flooding address, whatever
// it sends: idle connections, or a ClientHello recorded from a real
// client (a replay, which passes its MAC and waits for a ClientFinished
// that never comes); the honest client gets every echo within 3 s and
// none of its handshakes is cut. Without, everyone is the balancer (the
// listeners' warning about cut handshakes names it), and the figures
// (logged, go test -v) show what that costs the honest client.
func TestHAProxyFlood(t *testing.T) {
	for _, tc := range []struct {
		proxied bool
		replay  bool
	}{{true, false}, {false, false}, {true, true}, {false, true}} {
		name := map[bool]string{true: "with --accept-proxy-from", false: "without --accept-proxy-from"}[tc.proxied] +
			map[bool]string{true: ", replayed ClientHellos", false: ", idle connections"}[tc.replay]
		t.Run(name, func(t *testing.T) {
			s := startStack(t, tc.proxied)
			var hello []byte
			if tc.replay {
				hello = s.clientHello(t)
			}
			r := floodAndEcho(t, s, hello, 3*time.Second, 2000)
			var evicted, late float64
			for i := range s.listeners {
				evicted += s.metric(t, i, `spipe_handshake_failures_total{mode="listen",reason="evicted"}`)
				late += s.metric(t, i, `spipe_handshake_failures_total{mode="listen",reason="hello_timeout"}`)
			}
			t.Logf("admission figures, %s: %d connections from %s through HAProxy in %v; honest echoes from %s"+
				" during the flood: %s, %d failed; after it: %s, %d failed; listeners cut %.0f (evicted) + %.0f (hello_timeout)",
				name, r.opened, floodIP, r.took.Round(time.Millisecond), honestIP,
				summary(r.during), r.failedDuring, summary(r.after), r.failedAfter, evicted, late)
			cuts := func(ip string) int {
				return s.listeners[0].log.Count(`msg="pending handshakes cut`, "source="+ip) +
					s.listeners[1].log.Count(`msg="pending handshakes cut`, "source="+ip)
			}
			if tc.proxied {
				assert.Zero(t, r.failedDuring+r.failedAfter, "honest echoes failed: %v", r.errs)
				for _, d := range append(slices.Clone(r.during), r.after...) {
					assert.Less(t, d, 3*time.Second, "an honest echo took too long")
				}
				assert.Zero(t, cuts(honestIP), "the honest client's handshakes were cut")
			} else {
				// The first cut's warning (one per 10 s): everyone is the
				// balancer.
				assert.Positive(t, cuts(balancerIP), "no listener cut handshakes of the balancer")
				assert.Zero(t, cuts(floodIP)+cuts(honestIP), "a listener saw a client's address without trusting the balancer")
			}
		})
	}
}

// clientHello records the first message a real client sends with the
// stack's key, as an attacker on the path could.
func (s *stack) clientHello(t *testing.T) []byte {
	t.Helper()
	client, server := net.Pipe()
	defer server.Close()
	go spipe.Client(client, &spipe.Config{Keys: []*spipe.Key{s.key}}).Handshake()
	hello := make([]byte, 107) // docs/PROTOCOL.md 2.1
	_, err := io.ReadFull(server, hello)
	require.NoError(t, err)
	client.Close()
	return hello
}

// floodResult is what floodAndEcho measured.
type floodResult struct {
	during, after             []time.Duration // honest echoes that succeeded
	failedDuring, failedAfter int
	errs                      []error
	opened                    int
	took                      time.Duration
}

// floodAndEcho opens connections from floodIP through HAProxy with 8
// dialers for d, each sending first (if not empty) and then nothing,
// keeping at most maxOpen open (closing the oldest); meanwhile an honest
// client echoes from honestIP every 50 ms, then 10 more times once the
// flood has stopped.
func floodAndEcho(t *testing.T, s *stack, first []byte, d time.Duration, maxOpen int) (r floodResult) {
	const dialers = 8
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		opened int
	)
	deadline := time.Now().Add(d)
	start := time.Now()
	for range dialers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var open []net.Conn
			defer func() {
				for _, c := range open {
					c.Close()
				}
			}()
			nd := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(floodIP)}, Timeout: 5 * time.Second}
			for time.Now().Before(deadline) {
				c, err := nd.Dial("tcp", s.frontend)
				if err != nil {
					continue
				}
				if len(first) > 0 {
					c.Write(first)
				}
				mu.Lock()
				opened++
				mu.Unlock()
				open = append(open, c)
				if len(open) > maxOpen/dialers {
					open[0].Close()
					open = open[1:]
				}
			}
			<-t.Context().Done() // held until the test ends: "after" runs beside them
		}()
	}
	echo := func(i int, ok *[]time.Duration, failed *int) {
		t0 := time.Now()
		if _, err := s.echo(honestIP, fmt.Sprint("honest ", i)); err != nil {
			*failed++
			r.errs = append(r.errs, err)
			return
		}
		*ok = append(*ok, time.Since(t0))
	}
	for i := 0; time.Now().Before(deadline); i++ {
		echo(i, &r.during, &r.failedDuring)
		time.Sleep(50 * time.Millisecond)
	}
	r.took = time.Since(start)
	for j := range 10 {
		echo(1000+j, &r.after, &r.failedAfter)
	}
	mu.Lock()
	r.opened = opened
	mu.Unlock()
	t.Cleanup(wg.Wait)
	return r
}

// summary is "n=N median M max X" of ds.
func summary(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return fmt.Sprintf("n=%d median %v max %v", len(s), s[len(s)/2].Round(100*time.Microsecond), s[len(s)-1].Round(100*time.Microsecond))
}

// TestHAProxyDrain: SIGTERM to one listener turns its /healthz to 503
// while it goes on accepting for its --drain-delay; HAProxy takes it out
// of rotation on that (the log says why) before the listener stops
// accepting, so every connection a client starts succeeds, before,
// during and after the drain, though HAProxy's retries are off here (the
// drain alone must do it), while the connections the stopped listener
// held finish before it exits 0.
func TestHAProxyDrain(t *testing.T) {
	s := startStackWith(t, true, func(t *testing.T, cfg string) string {
		for _, line := range []string{"    retries 3\n", "    option redispatch 1\n"} {
			require.Contains(t, cfg, line)
			cfg = strings.Replace(cfg, line, "", 1)
		}
		return strings.Replace(cfg, "defaults\n", "defaults\n    retries 0\n", 1)
	})
	// Connections open before the stop, until each listener holds one
	// (leastconn sees to it, once earlier sessions are gone).
	const open = `spipe_connections_open{mode="listen"}`
	var held []*spipe.Conn
	for len(held) < 10 && (s.metric(t, 0, open) == 0 || s.metric(t, 1, open) == 0) {
		c, err := (&spipe.Dialer{Config: &spipe.Config{Keys: []*spipe.Key{s.key}}}).Dial("tcp", s.frontend)
		require.NoError(t, err)
		held = append(held, c.(*spipe.Conn))
		pipetest.EchoOver(t, c, c, "before the stop")
	}
	require.Positive(t, s.metric(t, 0, open), "no connection open on the listener to stop")

	type attempt struct {
		start time.Time
		err   error
	}
	var (
		mu       sync.Mutex
		attempts []attempt
		stop     = make(chan struct{})
		wg       sync.WaitGroup
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				t0 := time.Now()
				_, err := s.echo(honestIP, fmt.Sprint("drain ", w, " ", i))
				mu.Lock()
				attempts = append(attempts, attempt{t0, err})
				mu.Unlock()
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	stopped := time.Now()
	require.NoError(t, s.listeners[0].cmd.Process.Signal(syscall.SIGTERM))
	s.haproxy.log.Wait(t, `listen1 is DOWN, reason: Layer7 wrong status, code: 503`, s.haproxy.done)
	down := time.Now()
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()

	for _, c := range held {
		pipetest.EchoOver(t, c, c, "after the stop")
		require.NoError(t, c.CloseWrite())
		_, err := io.ReadAll(c)
		require.NoError(t, err)
		c.Close()
	}
	assert.Equal(t, 0, s.listeners[0].exitCode(t, 15*time.Second), "the stopped listener's exit status")
	assert.NotZero(t, s.listeners[0].log.Count(`msg="shutting down: waiting for open connections"`),
		"the stopped listener did not wait for its open connections")

	var before, window, afterDown, failedAfter int
	for _, a := range attempts {
		switch {
		case a.start.Before(stopped):
			before++
		case a.start.Before(down):
			window++
		default:
			afterDown++
			if a.err != nil {
				failedAfter++
				t.Errorf("a connection started %v after HAProxy took the listener out failed: %v", a.start.Sub(down), a.err)
			}
		}
	}
	var failedWindow int
	for _, a := range attempts {
		if a.err != nil && a.start.Before(down) {
			failedWindow++
			t.Errorf("a connection started %v after the SIGTERM, before HAProxy took the listener out, failed: %v", a.start.Sub(stopped), a.err)
		}
	}
	assert.NotZero(t, s.listeners[0].log.Count(`msg="draining: /healthz answers 503`), "the stopped listener did not drain")
	t.Logf("drain: SIGTERM to listener 1, out of HAProxy's rotation %v later; connections started before the stop %d,"+
		" between the stop and that %d (%d failed), after it %d (%d failed)",
		down.Sub(stopped).Round(time.Millisecond), before, window, failedWindow, afterDown, failedAfter)
	assert.Positive(t, afterDown, "no connection was tried after the listener was out")
}
