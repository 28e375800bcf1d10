// Package pipetest runs "spipe listen" and "spipe connect" in the test's
// own process, exactly as the command runs them (internal/service), with
// what tests of the pipe need around them: key files, echo targets, log
// capture, clients and a metrics scraper. The service's tests and the
// stress tests share it; the command's tests use its clients and log
// capture against the real binary.
package pipetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/engine"
	"github.com/spipe-dev/spipe/internal/service"
	"github.com/spipe-dev/spipe/internal/testutil"
)

// KeyFile writes a fresh key file as "spipe keygen" makes them (32 random
// bytes as hex and a newline, mode 0600) and returns its path.
func KeyFile(t testing.TB) string {
	t.Helper()
	k := make([]byte, 32)
	rand.Read(k)
	path := filepath.Join(t.TempDir(), "key")
	require.NoError(t, os.WriteFile(path, []byte(hex.EncodeToString(k)+"\n"), 0o600))
	return path
}

// Service is a started service running in this process.
type Service struct {
	// Addr is the address it accepts on; "" for a stdio connection.
	Addr string
	// Log holds everything it logged, at every level.
	Log *testutil.Log
	// Svc is the service itself.
	Svc *service.Service

	cancel context.CancelFunc
	reload chan os.Signal
	done   chan struct{}
	err    error
}

// Options returns the options tests start from: mode, source ("" for none:
// a stdio connection), target and one key file, and limits a test would
// otherwise have to set (the command line's defaults, a short grace).
func Options(t testing.TB, mode service.Mode, source, target, key string) service.Options {
	t.Helper()
	opts := service.Options{
		Mode: mode, KeyFiles: []string{key},
		MaxConns: 100, MaxConnsWait: 10 * time.Second, HandshakeTimeout: 5 * time.Second, ShutdownTimeout: time.Second,
	}
	if source != "" {
		src, err := engine.ParseAddr(source)
		require.NoError(t, err)
		opts.Source = &src
	}
	dst, err := engine.ParseAddr(target)
	require.NoError(t, err)
	opts.Target = dst
	return opts
}

// Start starts a service accepting on source (host:port with port 0 for
// any, or a socket path) and forwarding to target, with the given key
// file; tweak, if not nil, adjusts the options first. The test fails if
// the service does not start; its cleanup stops it.
func Start(t testing.TB, mode service.Mode, source, target, key string, tweak func(*service.Options)) *Service {
	t.Helper()
	opts := Options(t, mode, source, target, key)
	if tweak != nil {
		tweak(&opts)
	}
	s, err := StartOptions(t, opts)
	require.NoError(t, err)
	return s
}

// StartOptions starts a service with opts and returns Start's error, if
// any, for tests of start-up failures. Once started, the test's cleanup
// stops it.
func StartOptions(t testing.TB, opts service.Options) (*Service, error) {
	t.Helper()
	s := &Service{Log: &testutil.Log{}, reload: make(chan os.Signal, 1), done: make(chan struct{})}
	logger := slog.New(slog.NewTextHandler(s.Log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	svc, err := service.Start(ctx, opts, logger)
	if err != nil {
		cancel()
		return nil, err
	}
	s.Svc, s.cancel = svc, cancel
	if a := svc.Addr(); a != nil {
		s.Addr = a.String()
	}
	go func() { s.err = svc.Run(ctx, s.reload); close(s.done) }()
	t.Cleanup(func() { s.Stop(t) })
	return s, nil
}

// Pair starts a listen forwarding to target and a connect forwarding to
// that listen, both on 127.0.0.1 and both serving when Pair returns.
// tweak, if not nil, adjusts the options of both.
func Pair(t testing.TB, target, key string, tweak func(*service.Options)) (listen, connect *Service) {
	t.Helper()
	listen = Start(t, service.Listen, "127.0.0.1:0", target, key, tweak)
	connect = Start(t, service.Connect, "127.0.0.1:0", listen.Addr, key, tweak)
	// Serving, so their own goroutines are all started before a test
	// counts goroutines.
	listen.Log.WaitCount(t, 1, 10*time.Second, "msg=serving")
	connect.Log.WaitCount(t, 1, 10*time.Second, "msg=serving")
	return listen, connect
}

// WithMetrics is a tweak for Start that serves the service's metrics on a
// free loopback port.
func WithMetrics(o *service.Options) {
	a, err := engine.ParseAddr("127.0.0.1:0")
	if err != nil {
		panic(err) // a constant address
	}
	o.MetricsAddr = &a
}

// MetricsAddr is the address the service serves its metrics on (started
// with WithMetrics).
func (s *Service) MetricsAddr() string { return s.Svc.MetricsAddr().String() }

// Metric scrapes the service's metrics and returns one series' value, -1
// if it is absent.
func (s *Service) Metric(t testing.TB, series string) float64 {
	t.Helper()
	return Metric(Scrape(t, s.MetricsAddr()), series)
}

// Reload asks the service to re-read its key files, as SIGHUP does.
func (s *Service) Reload() { s.reload <- syscall.SIGHUP }

// Done is closed when Run has returned.
func (s *Service) Done() <-chan struct{} { return s.done }

// Shutdown starts a graceful shutdown, as SIGTERM does, without waiting.
func (s *Service) Shutdown() { s.cancel() }

// Wait waits up to within for Run to return and returns its error, which
// the test's cleanup then no longer checks.
func (s *Service) Wait(t testing.TB, within time.Duration) error {
	t.Helper()
	select {
	case <-s.done:
		if s.cancel != nil {
			s.cancel()
			s.cancel = nil
		}
		return s.err
	case <-time.After(within):
		t.Fatalf("service did not stop within %v; log:\n%s", within, testutil.Tail(s.Log.String(), 30))
		return nil
	}
}

// Stop shuts the service down, waits for Run to return and fails the test
// if it returned an error, or if its metrics (if it serves any) counted
// an end or failure under a reason the engine does not list. Stopping
// again does nothing.
func (s *Service) Stop(t testing.TB) {
	t.Helper()
	if s.cancel == nil {
		return
	}
	s.checkReasons(t)
	s.cancel()
	s.cancel = nil
	select {
	case <-s.done:
		if s.err != nil {
			t.Errorf("service ended with %v", s.err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("service did not stop; log:\n%s", testutil.Tail(s.Log.String(), 30))
	}
}

// MuxConnect starts a "spipe connect --mux" accepting on 127.0.0.1 and
// carrying its connections to the listener at addr, and waits for its
// first carrier. tweak, if not nil, adjusts the options first.
func MuxConnect(t testing.TB, addr, key string, tweak func(*service.Options)) *Service {
	t.Helper()
	c := Start(t, service.Connect, "127.0.0.1:0", addr, key, func(o *service.Options) {
		if tweak != nil {
			tweak(o)
		}
		o.Mux = true
	})
	c.Log.Wait(t, `msg="carrier open"`, nil)
	return c
}
