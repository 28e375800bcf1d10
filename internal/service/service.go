package service

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spipe-dev/spipe/internal/buildinfo"
	"github.com/spipe-dev/spipe/internal/engine"
	"github.com/spipe-dev/spipe/internal/keyring"
	"github.com/spipe-dev/spipe/internal/metrics"
	"github.com/spipe-dev/spipe/internal/pidfile"
)

// Service is a started "spipe listen" or "spipe connect": keys loaded,
// sockets open, not yet serving.
type Service struct {
	opts    Options
	log     *slog.Logger
	keyring *keyring.Keyring
	keys    atomic.Pointer[keySet]
	ln      net.Listener // nil for a stdio connection
	metrics *metrics.Metrics
	metLn   net.Listener
	fwd     *engine.Forwarder
	unpid   func()

	abortOnce sync.Once
	aborted   chan struct{} // closed by Abort
}

// Start checks the options, loads the keys and opens the listening
// sockets. Every error it returns is one line meant for the user, and
// nothing is left open or listening after one. log may be nil.
func Start(ctx context.Context, opts Options, log *slog.Logger) (_ *Service, err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Service{opts: opts, log: log, aborted: make(chan struct{})}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if err := s.loadKeys(); err != nil {
		return nil, err
	}
	if opts.Source != nil {
		s.ln, err = engine.Listen(ctx, *opts.Source, engine.ListenOptions{
			NoKeepAlive: opts.NoKeepAlive, SocketMode: opts.SocketMode,
		})
		if err != nil {
			return nil, err
		}
	}
	if opts.MetricsAddr != nil {
		s.metrics = newMetrics(opts.Mode)
		s.metLn, err = engine.Listen(ctx, *opts.MetricsAddr, engine.ListenOptions{})
		if err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	if opts.PidFile != "" {
		s.unpid, err = pidfile.Write(opts.PidFile)
		if err != nil {
			return nil, err
		}
	}
	s.fwd = s.forwarder()
	s.logKeys(s.keys.Load())
	return s, nil
}

// newMetrics makes the metrics with every failure series the engine can
// report, at zero, and the build's labels.
func newMetrics(mode Mode) *metrics.Metrics {
	return metrics.New(metrics.Config{
		Mode:         mode.String(),
		Classify:     engine.Reason,
		IsFrameError: engine.IsFrameError,
		Reasons:      metrics.Reasons(engine.Reasons()),
		Build:        buildinfo.Labels(),
	})
}

// Addr is the address the service accepts on (nil for a stdio connection).
func (s *Service) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// MetricsAddr is the address metrics are served on (nil without metrics).
func (s *Service) MetricsAddr() net.Addr {
	if s.metLn == nil {
		return nil
	}
	return s.metLn.Addr()
}

// Run serves until ctx is done (then shuts down gracefully: /healthz
// answers 503 at once, accepting goes on for DrainDelay if metrics are
// served, then see engine.Forwarder.Serve) or, for a stdio connection,
// until that connection ends. A signal on reload re-reads the key files,
// except for a stdio connection, which has nothing to reload: there it
// is ignored (ssh sends SIGHUP to its ProxyCommand as it exits). Run
// releases everything Start opened.
func (s *Service) Run(ctx context.Context, reload <-chan os.Signal) error {
	defer s.close()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Every goroutine the service keeps for its life starts before the
	// metrics server, so the first /metrics that answers already counts
	// them all: its go_goroutines is the idle figure a leak is measured
	// against, not one that grows by a goroutine a moment later.
	if s.ln == nil {
		go s.ignore(runCtx, reload)
	} else {
		go s.reloadOn(runCtx, reload)
	}
	if s.metLn != nil {
		// The metrics address outlives ctx, until Run returns: through
		// the shutdown, /healthz answers 503 while open connections
		// finish, so a load balancer sends new ones elsewhere.
		srvCtx, stopSrv := context.WithCancel(context.WithoutCancel(ctx))
		served := make(chan struct{})
		go func() { s.metrics.Serve(srvCtx, s.metLn, s.log, ctx.Done()); close(served) }()
		// Stopped, before s.close closes its socket under it.
		defer func() { stopSrv(); <-served }()
	}
	if s.ln == nil {
		if err := s.fwd.Handle(ctx, &engine.StdioConn{R: s.opts.Stdin, W: s.opts.Stdout}); err != nil {
			return fmt.Errorf("connection to %s: %w", s.opts.Target, err)
		}
		return nil
	}
	attrs := []any{"mode", s.opts.Mode.String(), "source", s.ln.Addr().String(), "target", s.opts.Target.String()}
	if s.metLn != nil {
		attrs = append(attrs, "metrics", "http://"+s.metLn.Addr().String()+"/metrics")
	}
	if len(s.opts.AcceptProxyFrom) > 0 {
		attrs = append(attrs, "accept_proxy_from", fmt.Sprint(s.opts.AcceptProxyFrom))
	}
	s.log.Info("serving", append(attrs, "keys", len(s.keys.Load().config.Keys))...)
	serving, stop := s.drain(ctx)
	defer stop()
	if err := s.fwd.Serve(serving, s.ln); err != nil {
		return fmt.Errorf("accepting on %s: %w", s.ln.Addr(), err)
	}
	return nil
}

// drain returns the context whose end stops accepting: ctx itself, or,
// where /healthz tells a load balancer that the service is stopping, one
// that ends DrainDelay after ctx (at once on Abort), so the balancer has
// moved new connections elsewhere before any is refused. stop releases
// it once Serve has returned.
func (s *Service) drain(ctx context.Context) (serving context.Context, stop func()) {
	delay := s.opts.DrainDelay
	if s.metLn == nil || delay <= 0 {
		return ctx, func() {}
	}
	serving, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stopWatch := context.AfterFunc(ctx, func() {
		s.log.Info("draining: /healthz answers 503; accepting new connections until the delay is over", "delay", delay)
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-s.aborted:
		case <-serving.Done():
		}
		cancel()
	})
	return serving, func() { stopWatch(); cancel() }
}

// Abort makes a service that is shutting down, or will, stop at once:
// no drain, no grace for open connections. A second SIGINT or SIGTERM
// does it.
func (s *Service) Abort() {
	s.abortOnce.Do(func() {
		if s.ln != nil {
			s.log.Warn("stopping at once: open connections are closed")
		}
		close(s.aborted)
		s.fwd.Abort()
	})
}

// reloadOn reloads the key files on each signal until ctx is done.
func (s *Service) reloadOn(ctx context.Context, reload <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-reload:
			err := s.Reload()
			if s.metrics != nil {
				s.metrics.KeyReload(err == nil)
			}
			if err != nil {
				s.log.Error("reloading keys failed; keeping the old ones", "err", err)
				continue
			}
			s.log.Info("keys reloaded", "keys", len(s.keys.Load().config.Keys))
		}
	}
}

// ignore drains reload signals for a stdio connection, saying so only at
// debug level: the user's terminal is its stderr.
func (s *Service) ignore(ctx context.Context, reload <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			return
		case sig := <-reload:
			s.log.Debug("signal ignored: a stdio connection has no keys to reload", "signal", fmt.Sprint(sig))
		}
	}
}

func (s *Service) close() {
	if s.ln != nil {
		s.ln.Close()
	}
	if s.metLn != nil {
		s.metLn.Close()
	}
	if s.unpid != nil {
		s.unpid()
	}
}

func (s *Service) forwarder() *engine.Forwarder {
	td := &engine.TargetDialer{
		Target:      s.opts.Target,
		Source:      s.opts.BindSource,
		NoKeepAlive: s.opts.NoKeepAlive,
		ProxyHeader: s.opts.ProxyProtocol,
	}
	// The engine's convention: its zero means its default, a negative
	// value none (no limit, no wait).
	maxConns := s.opts.MaxConns
	if maxConns == 0 {
		maxConns = -1
	}
	maxConnsWait := s.opts.MaxConnsWait
	if maxConnsWait == 0 {
		maxConnsWait = -1
	}
	f := &engine.Forwarder{
		Dial:                td.Dial,
		HandshakeTimeout:    s.opts.HandshakeTimeout,
		IdleTimeout:         s.opts.IdleTimeout,
		MaxConns:            maxConns,
		MaxConnsWait:        maxConnsWait,
		MaxPending:          s.opts.MaxPending,
		MaxPendingPerSource: s.opts.MaxPendingPerSource,
		ShutdownTimeout:     s.opts.ShutdownTimeout,
		AcceptProxyFrom:     s.opts.AcceptProxyFrom,
		Log:                 s.log,
		AccessLog:           s.opts.AccessLog,
	}
	if s.metrics != nil {
		f.Observer = s.metrics
	}
	if s.opts.Mode == Listen {
		f.SecureSide = engine.SecureInbound
		f.Secure = s.serverHandshake
		f.FirstMessageSize = clientHelloSize
	} else {
		f.SecureSide = engine.SecureOutbound
		f.Secure = s.clientHandshake
		if s.opts.Mux {
			f.Mux = &engine.Mux{Carriers: s.opts.MuxCarriers, StreamsPerCarrier: s.opts.MuxStreams, Target: s.opts.Target.String()}
		}
	}
	return f
}
