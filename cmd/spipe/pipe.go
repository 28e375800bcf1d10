package main

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/spipe-dev/spipe/internal/engine"
	"github.com/spipe-dev/spipe/internal/service"
	"github.com/spipe-dev/spipe/pkg/spipe"
)

// pipeFlags are the flags "listen" and "connect" share, as typed.
type pipeFlags struct {
	source, target, bind string
	keys                 []string
	cipher               string
	noPFS, requirePFS    bool
	padTo                int
	maxConns             int
	maxPending           int
	maxPendingPerSource  int
	handshakeTimeout     time.Duration
	idleTimeout          time.Duration
	shutdownTimeout      time.Duration
	noKeepAlive          bool
	socketMode           string
	pidFile              string
	metrics              string
	proxyProtocol        bool
}

func (p *pipeFlags) register(fs *pflag.FlagSet, mode service.Mode) {
	if mode == service.Listen {
		fs.StringVarP(&p.source, "source", "s", "", "`ADDR` to accept encrypted connections on: host:port, [v6]:port or /abs/unix.sock (required)")
		fs.StringVarP(&p.target, "target", "t", "", "`ADDR` to forward the plaintext to: host:port or /abs/unix.sock (required)")
		fs.StringArrayVarP(&p.keys, "key", "k", nil, "key `FILE` (repeat to admit several keys during rotation; - reads it from stdin)")
		fs.BoolVar(&p.proxyProtocol, "proxy-protocol", false, "send a PROXY protocol v2 header to the target with the client's address")
		fs.IntVar(&p.maxPending, "max-pending", 0, "`N` handshakes in progress at once; when full, a new connection cuts the oldest handshake of the\naddress holding the most (0: --max-conns or 1024, whichever is larger)")
		fs.IntVar(&p.maxPendingPerSource, "max-pending-per-source", 0, "`N` handshakes in progress at once from one address (IPv6: one /64); a new one cuts that\naddress's oldest (0: 128 or --max-conns, whichever is larger, but at most --max-pending)")
	} else {
		fs.StringVarP(&p.source, "source", "s", "", "`ADDR` to accept plaintext connections on: host:port, [v6]:port or /abs/unix.sock\n(without it: one connection over stdin/stdout, for ssh's ProxyCommand)")
		fs.StringVarP(&p.target, "target", "t", "", "`ADDR` of the spipe listen to connect to: host:port or /abs/unix.sock (required)")
		fs.StringArrayVarP(&p.keys, "key", "k", nil, "key `FILE` (- reads it from stdin)")
	}
	fs.StringVar(&p.cipher, "cipher", "", "comma-separated `SUITES` in preference order (default chacha20-poly1305,xsalsa20-poly1305)")
	fs.BoolVar(&p.noPFS, "no-pfs", false, "skip the X25519 exchange (faster handshakes, no forward secrecy)")
	fs.BoolVar(&p.requirePFS, "require-pfs", false, "refuse peers that skip the X25519 exchange")
	fs.IntVar(&p.padTo, "pad", 0, "pad every frame to a multiple of `N` bytes, hiding write sizes (0: off)")
	fs.IntVar(&p.maxConns, "max-conns", 100, "`N` connections handled at once; more wait until one ends")
	fs.DurationVar(&p.handshakeTimeout, "handshake-timeout", 10*time.Second, "time allowed for a handshake, and for dialling the target")
	fs.DurationVar(&p.idleTimeout, "idle-timeout", 0, "close connections idle this long in both directions (0: never)")
	fs.DurationVar(&p.shutdownTimeout, "shutdown-timeout", 10*time.Second, "on SIGINT/SIGTERM, time open connections get to finish")
	fs.BoolVar(&p.noKeepAlive, "no-keepalive", false, "turn TCP keep-alives off")
	fs.StringVarP(&p.bind, "bind", "b", "", "source `IP` address (optionally :port) for outgoing connections")
	fs.StringVar(&p.socketMode, "socket-mode", "0660", "permissions (octal `MODE`) of a Unix socket created for -s")
	fs.StringVar(&p.pidFile, "pidfile", "", "write the process ID to `FILE`")
	fs.StringVar(&p.metrics, "metrics", "", "serve Prometheus metrics at http://`ADDR`/metrics")
}

// options validates the flags into service options. Every error is a
// usage error naming the flag.
func (p *pipeFlags) options(mode service.Mode) (service.Options, error) {
	o := service.Options{
		Mode:                  mode,
		KeyFiles:              p.keys,
		DisableForwardSecrecy: p.noPFS,
		RequireForwardSecrecy: p.requirePFS,
		MaxConns:              p.maxConns,
		MaxPending:            p.maxPending,
		MaxPendingPerSource:   p.maxPendingPerSource,
		HandshakeTimeout:      p.handshakeTimeout,
		IdleTimeout:           p.idleTimeout,
		ShutdownTimeout:       p.shutdownTimeout,
		NoKeepAlive:           p.noKeepAlive,
		ProxyProtocol:         p.proxyProtocol,
		PidFile:               p.pidFile,
		PadTo:                 p.padTo,
	}
	if p.target == "" {
		return o, usagef("-t/--target is required")
	}
	if len(p.keys) == 0 {
		return o, usagef("-k/--key is required")
	}
	if mode == service.Connect && len(p.keys) > 1 {
		return o, usagef("-k/--key: connect takes one key")
	}
	if mode == service.Listen && p.source == "" {
		return o, usagef("-s/--source is required")
	}
	if p.source != "" {
		a, err := engine.ParseAddr(p.source)
		if err != nil {
			return o, usagef("-s/--source: %v", err)
		}
		o.Source = &a
	}
	var err error
	if o.Target, err = engine.ParseAddr(p.target); err != nil {
		return o, usagef("-t/--target: %v", err)
	}
	if !o.Target.IsUnix() && o.Target.Port() == 0 {
		return o, usagef("-t/--target: port 0 cannot be dialled")
	}
	if p.bind != "" {
		if o.BindSource, err = engine.ParseSourceIP(p.bind); err != nil {
			return o, usagef("-b/--bind: %v", err)
		}
	}
	if p.cipher != "" {
		if o.Suites, err = spipe.ParseSuites(p.cipher); err != nil {
			return o, usagef("--cipher: %v", err)
		}
	}
	if p.noPFS && p.requirePFS {
		return o, usagef("--no-pfs and --require-pfs contradict each other")
	}
	if p.padTo < 0 || p.padTo > spipe.DefaultMaxPayload {
		return o, usagef("--pad %d: want 0 to %d", p.padTo, spipe.DefaultMaxPayload)
	}
	if p.maxConns < 1 {
		return o, usagef("--max-conns %d: must be at least 1", p.maxConns)
	}
	if p.maxPending < 0 {
		return o, usagef("--max-pending %d: must not be negative", p.maxPending)
	}
	if p.maxPendingPerSource < 0 {
		return o, usagef("--max-pending-per-source %d: must not be negative", p.maxPendingPerSource)
	}
	if p.handshakeTimeout <= 0 {
		return o, usagef("--handshake-timeout %v: must be positive", p.handshakeTimeout)
	}
	if p.idleTimeout < 0 {
		return o, usagef("--idle-timeout %v: must not be negative", p.idleTimeout)
	}
	if p.shutdownTimeout < 0 {
		return o, usagef("--shutdown-timeout %v: must not be negative", p.shutdownTimeout)
	}
	if p.metrics != "" {
		a, err := engine.ParseAddr(p.metrics)
		if err != nil || a.IsUnix() {
			return o, usagef("--metrics %q: want host:port", p.metrics)
		}
		o.MetricsAddr = &a
	}
	mode64, err := strconv.ParseUint(p.socketMode, 8, 32)
	if err != nil || mode64 > 0o777 || mode64&0o600 != 0o600 {
		return o, usagef("--socket-mode %q: want octal permissions such as 0660 that let the owner read and write", p.socketMode)
	}
	o.SocketMode = os.FileMode(mode64)
	return o, nil
}

// runPipe starts the service (every start-up error comes out here, before
// anything serves) and runs it until SIGINT or SIGTERM; SIGHUP reloads
// the key files.
func (a *app) runPipe(cmd *cobra.Command, p *pipeFlags, mode service.Mode) error {
	opts, err := p.options(mode)
	if err != nil {
		return err
	}
	opts.Stdin, opts.Stdout = a.stdin, a.stdout
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	svc, err := service.Start(ctx, opts, a.log)
	if err != nil {
		return err
	}
	if err := svc.Run(ctx, hup); err != nil {
		return fmt.Errorf("%s: %w", mode, err)
	}
	return nil
}
