package service_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/buildinfo"
	"github.com/spipe-dev/spipe/internal/service"
	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/pipetest"
	"github.com/spipe-dev/spipe/pkg/spipe"
)

// fingerprint is the fingerprint of the key in file, as anyone holding
// the file computes it.
func fingerprint(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	k, err := spipe.NewKey(b)
	require.NoError(t, err)
	return k.Fingerprint()
}

// TestKeyFingerprintsLogged: the fingerprint of every key is logged at
// start-up and after each reload, and the line of each connection names
// the key it used.
func TestKeyFingerprintsLogged(t *testing.T) {
	k1, k2 := pipetest.KeyFile(t), pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, k1, func(o *service.Options) {
		o.KeyFiles = []string{k1, k2}
		o.AccessLog = true
	})
	for _, k := range []string{k1, k2} {
		assert.Equal(t, 1, listen.Log.Count("level=INFO", `msg="key loaded" file=`+k+" fingerprint="+fingerprint(t, k)), listen.Log.String())
	}
	connect := pipetest.Start(t, service.Connect, "127.0.0.1:0", listen.Addr, k2, nil)
	assert.Equal(t, 1, connect.Log.Count("level=INFO", `msg="key loaded" file=`+k2+" fingerprint="+fingerprint(t, k2)))
	require.NoError(t, pipetest.TryEcho(connect.Addr, "which key?"))
	listen.Log.Wait(t, `level=INFO msg="connection closed" peer=\S+ key=`+fingerprint(t, k2)+` suite=chacha20-poly1305 pfs=true`, nil)

	listen.Reload()
	listen.Log.Wait(t, `msg="keys reloaded" keys=2`, nil)
	for _, k := range []string{k1, k2} {
		assert.Equal(t, 2, listen.Log.Count(`msg="key loaded" file=`+k+" fingerprint="+fingerprint(t, k)))
	}
}

// TestReloadFailureKeepsOldKeys: a reload that cannot read one of several
// key files names that file, keeps every old key in use, and is counted;
// the next good reload is counted as one.
func TestReloadFailureKeepsOldKeys(t *testing.T) {
	k1 := pipetest.KeyFile(t)
	dir := t.TempDir()
	k2 := filepath.Join(dir, "second")
	copyFile(t, pipetest.KeyFile(t), k2)
	tg := pipetest.EchoTarget(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, k1, func(o *service.Options) {
		o.KeyFiles = []string{k1, k2}
		pipetest.WithMetrics(o)
	})
	second := pipetest.Start(t, service.Connect, "127.0.0.1:0", listen.Addr, k2, nil)
	saved, err := os.ReadFile(k2)
	require.NoError(t, err)

	require.NoError(t, os.Remove(k2))
	listen.Reload()
	listen.Log.Wait(t, `level=ERROR msg="reloading keys failed; keeping the old ones" err="key file `+regexp.QuoteMeta(k2)+`: no such file"`, nil)
	assert.NoError(t, pipetest.TryEcho(second.Addr, "old keys"), "the failed reload dropped a key")
	body := pipetest.Scrape(t, listen.MetricsAddr())
	assert.Equal(t, 1.0, pipetest.Metric(body, `spipe_key_reloads_total{mode="listen",result="failure"}`))
	assert.Equal(t, 0.0, pipetest.Metric(body, `spipe_key_reloads_total{mode="listen",result="success"}`))

	require.NoError(t, os.WriteFile(k2, saved, 0o600))
	listen.Reload()
	listen.Log.Wait(t, `msg="keys reloaded" keys=2`, nil)
	assert.Equal(t, 1.0, listen.Metric(t, `spipe_key_reloads_total{mode="listen",result="success"}`))
}

// TestStdioIsQuiet: a stdio connection (ssh's ProxyCommand) writes nothing
// above debug level to the user's terminal, and a SIGHUP (which ssh sends
// as it exits) neither reloads nor disturbs the connection. With --mux the
// carrier's own lines are debug lines too.
func TestStdioIsQuiet(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, nil)
	for _, muxed := range []bool{false, true} {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		c := pipetest.Start(t, service.Connect, "", listen.Addr, key, func(o *service.Options) {
			o.Stdin, o.Stdout = inR, outW
			o.Mux = muxed
		})
		pipetest.EchoOver(t, inW, outR, "before")
		c.Reload()
		c.Log.Wait(t, `level=DEBUG msg="signal ignored: a stdio connection has no keys to reload"`, nil)
		pipetest.EchoOver(t, inW, outR, "after")
		inW.Close()
		go io.Copy(io.Discard, outR)
		require.NoError(t, c.Wait(t, 10*time.Second))
		for _, level := range []string{"INFO", "WARN", "ERROR"} {
			assert.Zero(t, c.Log.Count("level="+level), "mux=%v: %s lines in a stdio session:\n%s", muxed, level, c.Log.String())
		}
		if muxed {
			assert.Equal(t, 1, c.Log.Count(`level=DEBUG msg="carrier open"`))
		}
	}
}

// TestStartupLineNamesEveryAddress: the "serving" line says where the
// service accepts, where it forwards and where its metrics are.
func TestStartupLineNamesEveryAddress(t *testing.T) {
	key := pipetest.KeyFile(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", "127.0.0.1:9", key, pipetest.WithMetrics)
	listen.Log.Wait(t, `level=INFO msg=serving mode=listen source=`+regexp.QuoteMeta(listen.Addr)+
		` target=127\.0\.0\.1:9 metrics=http://`+regexp.QuoteMeta(listen.MetricsAddr())+`/metrics keys=1`, nil)
}

// TestMetricsFromStartUp: before any connection, every failure series the
// engine can report exists at zero, with the build's labels beside them;
// a refused target then counts as a dial failure.
func TestMetricsFromStartUp(t *testing.T) {
	key := pipetest.KeyFile(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", pipetest.FreeAddr(t), key, pipetest.WithMetrics)
	body := pipetest.Scrape(t, listen.MetricsAddr())
	for _, series := range []string{
		`spipe_handshake_failures_total{mode="listen",reason="auth"}`,
		`spipe_handshake_failures_total{mode="listen",reason="version"}`,
		`spipe_handshake_failures_total{mode="listen",reason="timeout"}`,
		`spipe_dial_failures_total{mode="listen",reason="refused"}`,
		`spipe_dial_failures_total{mode="listen",reason="unreachable"}`,
		`spipe_transfer_failures_total{mode="listen",reason="tampered"}`,
		`spipe_transfer_failures_total{mode="listen",reason="idle"}`,
		`spipe_frame_errors_total{mode="listen",reason="truncated"}`,
		`spipe_key_reloads_total{mode="listen",result="failure"}`,
	} {
		assert.Equal(t, 0.0, pipetest.Metric(body, series), series)
	}
	info := regexp.MustCompile(`(?m)^spipe_build_info\{(.*)\} 1$`).FindStringSubmatch(body)
	require.NotNil(t, info, "no spipe_build_info")
	for k, v := range buildinfo.Labels() {
		assert.Contains(t, info[1], k+"="+strconv.Quote(v))
	}

	connect := pipetest.Start(t, service.Connect, "127.0.0.1:0", listen.Addr, key, nil)
	assert.Error(t, pipetest.TryEcho(connect.Addr, "x"))
	require.Eventually(t, func() bool {
		return listen.Metric(t, `spipe_dial_failures_total{mode="listen",reason="refused"}`) == 1
	}, 10*time.Second, 20*time.Millisecond)
}

// TestREADMESeriesExported: every series and label the README's table of
// ends and failures names is on the metrics page from start-up, at zero,
// and every end and failure series on it is in the table (the engine's
// test checks the table's reasons and levels).
func TestREADMESeriesExported(t *testing.T) {
	key := pipetest.KeyFile(t)
	for _, mode := range []service.Mode{service.Listen, service.Connect} {
		s := pipetest.Start(t, mode, "127.0.0.1:0", pipetest.FreeAddr(t), key, pipetest.WithMetrics)
		exported := map[string]bool{}
		for line := range strings.SplitSeq(pipetest.Scrape(t, s.MetricsAddr()), "\n") {
			name, labels, ok := strings.Cut(line, "{")
			if ok && (name == "spipe_connection_ends_total" || strings.HasSuffix(name, "_failures_total") || name == "spipe_frame_errors_total") {
				assert.True(t, strings.HasSuffix(labels, "} 0"), "not zero at start-up: %s", line)
				label := regexp.MustCompile(`(?:how|reason)="([^"]*)"`).FindStringSubmatch(labels)
				require.NotNil(t, label, line)
				// A series with a stage is a row per stage.
				if stage := regexp.MustCompile(`stage="[^"]*"`).FindString(labels); stage != "" {
					name += "{" + stage + "}"
				}
				exported[name+" "+label[1]] = true
			}
		}
		listed := map[string]bool{}
		for _, row := range testutil.MarkdownTable(t, "../../README.md", "TestREADMEReasonTable") {
			for series := range strings.SplitSeq(row[0], ", ") {
				listed[series+" "+row[1]] = true
			}
		}
		for k := range listed {
			assert.True(t, exported[k], "%v: the README lists %q, the metrics have no such series", mode, k)
		}
		for k := range exported {
			assert.True(t, listed[k], "%v: the metrics export %q, the README does not list it", mode, k)
		}
	}
}

// TestRefusedClientListsCauses: a connect whose handshake the server ends
// cannot know why, so its line lists the likely causes.
func TestRefusedClientListsCauses(t *testing.T) {
	key, other := pipetest.KeyFile(t), pipetest.KeyFile(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", "127.0.0.1:9", key, nil)
	connect := pipetest.Start(t, service.Connect, "127.0.0.1:0", listen.Addr, other, nil)
	assert.Error(t, pipetest.TryEcho(connect.Addr, "x"))
	line := connect.Log.Wait(t, `level=WARN msg="connection failed" peer=\S+ stage=handshake reason=truncated err=.*`, nil)
	for _, cause := range []string{"wrong key or context", "spipe key fingerprint", "--context", "no cipher suite in common",
		"--cipher", "forward-secrecy policy", "not a spipe server", "a mode the server does not run"} {
		assert.Contains(t, line, cause)
	}
}

// TestPidfileLocked: a second service given the same PID file fails at
// start-up and leaves the first one's file alone.
func TestPidfileLocked(t *testing.T) {
	key := pipetest.KeyFile(t)
	pidfile := filepath.Join(t.TempDir(), "spipe.pid")
	withPid := func(o *service.Options) { o.PidFile = pidfile }
	pipetest.Start(t, service.Listen, "127.0.0.1:0", "127.0.0.1:9", key, withPid)
	opts := pipetest.Options(t, service.Listen, "127.0.0.1:0", "127.0.0.1:9", key)
	withPid(&opts)
	_, err := pipetest.StartOptions(t, opts)
	assert.EqualError(t, err, "pidfile "+pidfile+": in use by another running process (PID "+strconv.Itoa(os.Getpid())+")")
	b, err := os.ReadFile(pidfile)
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(os.Getpid())+"\n", string(b))

	opts.PidFile = filepath.Join(t.TempDir(), "gone", "spipe.pid")
	_, err = pipetest.StartOptions(t, opts)
	assert.EqualError(t, err, "pidfile "+opts.PidFile+": directory "+filepath.Dir(opts.PidFile)+" does not exist")
}

// healthz returns the status of GET /healthz at addr, 0 if nothing
// answers.
func healthz(addr string) int {
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestHealthzThroughShutdown: /healthz answers 200 while the service
// accepts; from the moment its shutdown starts, 503, for as long as open
// connections take to finish; then the address closes with the service.
// Listen and connect answer alike.
func TestHealthzThroughShutdown(t *testing.T) {
	key := pipetest.KeyFile(t)
	for _, mode := range []service.Mode{service.Listen, service.Connect} {
		t.Run(mode.String(), func(t *testing.T) {
			tg, release := pipetest.HeldEchoTarget(t)
			listen, connect := pipetest.Pair(t, tg.Addr, key, func(o *service.Options) {
				pipetest.WithMetrics(o)
				o.ShutdownTimeout = 10 * time.Second
			})
			svc := map[service.Mode]*pipetest.Service{service.Listen: listen, service.Connect: connect}[mode]
			assert.Equal(t, http.StatusOK, healthz(svc.MetricsAddr()))
			tr := pipetest.StartTransfer(t, connect.Addr, tg, 1000)
			svc.Shutdown()
			svc.Log.Wait(t, "shutting down: waiting for open connections", nil)
			assert.Equal(t, http.StatusServiceUnavailable, healthz(svc.MetricsAddr()))
			release()
			assert.Equal(t, tr.Sent, <-tr.Got, "the open connection was cut")
			require.NoError(t, svc.Wait(t, 10*time.Second))
			assert.Zero(t, healthz(svc.MetricsAddr()), "the health address outlived the service")
		})
	}
}

// TestDrainDelay: told to stop, a service serving metrics answers 503
// on /healthz at once and still accepts and serves new connections for
// --drain-delay, so that a load balancer has sent new connections
// elsewhere before any is refused; open connections carry on. Abort (a
// second SIGINT or SIGTERM) ends the drain and the grace period at once,
// here long before either would have. Listen and connect alike.
func TestDrainDelay(t *testing.T) {
	key := pipetest.KeyFile(t)
	for _, mode := range []service.Mode{service.Listen, service.Connect} {
		t.Run(mode.String(), func(t *testing.T) {
			tg := pipetest.EchoTarget(t)
			listen, connect := pipetest.Pair(t, tg.Addr, key, func(o *service.Options) {
				pipetest.WithMetrics(o)
				o.DrainDelay = time.Minute
				o.ShutdownTimeout = time.Minute
			})
			svc, other := listen, connect
			if mode == service.Connect {
				svc, other = connect, listen
			}
			t.Cleanup(other.Svc.Abort) // not the one under test: no drain at the end
			held := pipetest.Dial(t, connect.Addr)
			pipetest.EchoOnce(t, held, "before the stop")
			svc.Shutdown()
			svc.Log.Wait(t, `msg="draining: /healthz answers 503; accepting new connections until the delay is over" delay=1m0s`, nil)
			assert.Equal(t, http.StatusServiceUnavailable, healthz(svc.MetricsAddr()))
			got := pipetest.RoundTrip(t, pipetest.Dial(t, connect.Addr), []byte("a new connection while draining"))
			assert.Equal(t, "a new connection while draining", string(got))
			pipetest.EchoOnce(t, held, "an open one")

			svc.Svc.Abort()
			require.NoError(t, svc.Wait(t, 10*time.Second), "stopped at once, not after the drain and the grace")
			svc.Log.Wait(t, `level=WARN msg="stopping at once: open connections are closed"`, nil)
			require.NoError(t, held.SetReadDeadline(time.Now().Add(10*time.Second)))
			_, err := io.ReadAll(held)
			assert.Error(t, err, "the open connection was closed, and so reset")
		})
	}
}

// TestNoDrainWithoutHealth: without --metrics nothing can tell a
// balancer that the service is stopping, so it stops accepting at once,
// whatever --drain-delay says.
func TestNoDrainWithoutHealth(t *testing.T) {
	key := pipetest.KeyFile(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", pipetest.EchoTarget(t).Addr, key,
		func(o *service.Options) { o.DrainDelay = time.Minute })
	listen.Shutdown()
	require.NoError(t, listen.Wait(t, 10*time.Second))
	assert.Zero(t, listen.Log.Count("draining"))
}
