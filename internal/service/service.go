package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync/atomic"

	"github.com/spipe-dev/spipe/internal/engine"
	"github.com/spipe-dev/spipe/internal/keyring"
	"github.com/spipe-dev/spipe/internal/metrics"
	"github.com/spipe-dev/spipe/internal/pidfile"
	"github.com/spipe-dev/spipe/pkg/spipe"
)

// Service is a started "spipe listen" or "spipe connect": keys loaded,
// sockets open, not yet serving.
type Service struct {
	opts    Options
	log     *slog.Logger
	keys    *keyring.Keyring
	config  atomic.Pointer[spipe.Config]
	ln      net.Listener // nil for a stdio connection
	metrics *metrics.Metrics
	metLn   net.Listener
	fwd     *engine.Forwarder
	unpid   func()
}

// Start checks the options, loads the keys and opens the listening
// sockets. Every error it returns is one line meant for the user, and
// nothing is left open or listening after one.
func Start(ctx context.Context, opts Options, log *slog.Logger) (_ *Service, err error) {
	s := &Service{opts: opts, log: log}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if opts.Mode == Connect && len(opts.KeyFiles) > 1 {
		return nil, errors.New("connect takes one key (-k given more than once)")
	}
	if opts.Mode == Connect && opts.Source == nil && contains(opts.KeyFiles, keyring.Stdin) {
		return nil, errors.New("-k - needs -s: without -s, standard input carries the connection")
	}
	var keys []*spipe.Key
	s.keys, keys, err = keyring.Load(opts.KeyFiles, opts.Stdin, log)
	if err != nil {
		return nil, err
	}
	cfg := s.newConfig(keys)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s.config.Store(cfg)

	if opts.Source != nil {
		s.ln, err = engine.Listen(ctx, *opts.Source, engine.ListenOptions{
			NoKeepAlive: opts.NoKeepAlive, SocketMode: opts.SocketMode,
		})
		if err != nil {
			return nil, err
		}
	}
	if opts.MetricsAddr != nil {
		s.metrics = metrics.New(opts.Mode.String(), engine.Reason, isFrameError)
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
	return s, nil
}

// Addr is the address the service accepts on (nil for a stdio connection).
func (s *Service) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Run serves until ctx is done (then shuts down gracefully, see
// engine.Forwarder.Serve) or, for a stdio connection, until that
// connection ends. A signal on reload re-reads the key files. Run releases
// everything Start opened.
func (s *Service) Run(ctx context.Context, reload <-chan os.Signal) error {
	defer s.close()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if s.metLn != nil {
		go s.metrics.Serve(runCtx, s.metLn, s.log)
	}
	go s.reloadOn(runCtx, reload)
	if s.ln == nil {
		return s.fwd.Handle(ctx, &engine.StdioConn{R: s.opts.Stdin, W: s.opts.Stdout})
	}
	s.log.Info("serving", "mode", s.opts.Mode.String(), "source", s.ln.Addr().String(), "target", s.opts.Target.String(),
		"keys", len(s.config.Load().Keys))
	return s.fwd.Serve(ctx, s.ln)
}

// Reload re-reads the key files; connections accepted afterwards use the
// new keys, open ones keep theirs. On error the old keys stay in use.
func (s *Service) Reload() error {
	keys, err := s.keys.Reload()
	if err != nil {
		return err
	}
	cfg := s.newConfig(keys)
	if err := cfg.Validate(); err != nil {
		return err
	}
	s.config.Store(cfg)
	return nil
}

func (s *Service) reloadOn(ctx context.Context, reload <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-reload:
			if err := s.Reload(); err != nil {
				s.log.Error("reloading keys failed; keeping the old ones", "err", err)
				continue
			}
			s.log.Info("keys reloaded", "keys", len(s.config.Load().Keys))
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

func (s *Service) newConfig(keys []*spipe.Key) *spipe.Config {
	return &spipe.Config{
		Keys:                  keys,
		Suites:                s.opts.Suites,
		DisableForwardSecrecy: s.opts.DisableForwardSecrecy,
		RequireForwardSecrecy: s.opts.RequireForwardSecrecy,
		PadTo:                 s.opts.PadTo,
		HandshakeTimeout:      s.opts.HandshakeTimeout,
	}
}

func (s *Service) forwarder() *engine.Forwarder {
	td := &engine.TargetDialer{
		Target:      s.opts.Target,
		Source:      s.opts.BindSource,
		NoKeepAlive: s.opts.NoKeepAlive,
		ProxyHeader: s.opts.ProxyProtocol,
	}
	f := &engine.Forwarder{
		Dial:             td.Dial,
		HandshakeTimeout: s.opts.HandshakeTimeout,
		IdleTimeout:      s.opts.IdleTimeout,
		MaxConns:         s.opts.MaxConns,
		MaxPending:       s.opts.MaxPending,
		ShutdownTimeout:  s.opts.ShutdownTimeout,
		Log:              s.log,
	}
	f.MaxPendingPerSource = s.opts.MaxPendingPerSource
	if s.metrics != nil {
		f.Observer = s.metrics
	}
	if s.opts.Mode == Listen {
		f.SecureSide = engine.SecureInbound
		f.Secure = s.handshake(spipe.Server)
		f.FirstMessageSize = clientHelloSize
	} else {
		f.SecureSide = engine.SecureOutbound
		f.Secure = s.handshake(spipe.Client)
	}
	return f
}

// clientHelloSize is the size of the protocol's first message, which a
// client sends as soon as it is connected: the listener cuts a connection
// that has not sent it within the engine's first-message deadline.
// TestClientHelloSize checks it against what pkg/spipe sends.
const clientHelloSize = 106

// handshake runs one side of the protocol with the keys current when the
// connection arrived.
func (s *Service) handshake(side func(net.Conn, *spipe.Config) *spipe.Conn) func(context.Context, net.Conn) (engine.Conn, error) {
	return func(ctx context.Context, c net.Conn) (engine.Conn, error) {
		sc := side(c, s.config.Load())
		if err := sc.Handshake(ctx); err != nil {
			sc.Close()
			return nil, err
		}
		return sc, nil
	}
}

// isFrameError reports a transfer failure that the protocol raised on a
// frame, as opposed to a socket error.
func isFrameError(err error) bool {
	for _, e := range []error{spipe.ErrTampered, spipe.ErrTruncated, spipe.ErrFrameTooLarge, spipe.ErrMalformedFrame, spipe.ErrCounterExhausted} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
