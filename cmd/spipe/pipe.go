package main

import (
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/spipe-dev/spipe/internal/engine"
	"github.com/spipe-dev/spipe/internal/service"
)

// pipeFlags are the flags "listen" and "connect" share, as typed.
type pipeFlags struct {
	source, target, bind string
	keys                 []string
	cipher               string
	context              string
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
	accessLog            bool
	mux                  bool
	muxCarriers          int
	muxStreams           int
	muxWindow            int
	// spiped's -F (accepted and ignored: spipe always runs in the
	// foreground) and -D (refused with the fix named, in options).
	foreground, daemonize bool
}

func (p *pipeFlags) register(fs *pflag.FlagSet, mode service.Mode) {
	if mode == service.Listen {
		fs.StringVarP(&p.source, "source", "s", "", "`ADDR` to accept encrypted connections on: host:port, [v6]:port, /abs/unix.sock,\nor systemd / systemd:NAME for a socket passed by systemd (required)")
		fs.StringVarP(&p.target, "target", "t", "", "`ADDR` to forward the plaintext to: host:port or /abs/unix.sock (required)")
		fs.StringArrayVarP(&p.keys, "key", "k", nil, "key `FILE` (repeat to admit several keys during rotation; - reads it from stdin)")
		fs.BoolVar(&p.proxyProtocol, "proxy-protocol", false, "send a PROXY protocol v2 header to the target with the client's address")
		fs.IntVar(&p.maxPending, "max-pending", 0, "`N` handshakes in progress at once; when full, a new connection cuts the oldest handshake of the\naddress holding the most (0: --max-conns or 1024, whichever is larger)")
		fs.IntVar(&p.maxPendingPerSource, "max-pending-per-source", 0, "`N` handshakes in progress at once from one address (IPv6: one /64); a new one cuts that\naddress's oldest (0: 128 or --max-conns, whichever is larger, but at most --max-pending)")
	} else {
		fs.StringVarP(&p.source, "source", "s", "", "`ADDR` to accept plaintext connections on: host:port, [v6]:port, /abs/unix.sock,\nsystemd or systemd:NAME (without it: one connection over stdin/stdout, for ssh's ProxyCommand)")
		fs.StringVarP(&p.target, "target", "t", "", "`ADDR` of the spipe listen to connect to: host:port or /abs/unix.sock (required)")
		fs.StringArrayVarP(&p.keys, "key", "k", nil, "key `FILE` (- reads it from stdin)")
		fs.BoolVar(&p.mux, "mux", false, "carry every connection as a stream of a connection kept open to the listener:\nno TCP connect or handshake per connection, one round trip to the first byte")
		fs.IntVar(&p.muxCarriers, "mux-carriers", 0, "with --mux, keep `N` connections to the listener and spread streams over them (0: 1)")
	}
	if mode == service.Listen {
		fs.IntVar(&p.muxStreams, "mux-streams", 0, "`N` streams at once on one multiplexed connection; a client's streams beyond it are reset\n(0: 1000; streams also count toward --max-conns)")
	} else {
		fs.IntVar(&p.muxStreams, "mux-streams", 0, "with --mux, `N` streams at once on one connection to the listener; more wait for room\n(0: 1000; at most the listener's --mux-streams)")
	}
	fs.IntVar(&p.muxWindow, "mux-window", 0, "multiplexed streams: the most one stream may have in flight toward this end once its window\nhas grown, in `BYTES` (262144 to 16777216, default 4194304; 262144: no growth). A stream grows\nonly while it is alone on its carrier and its reader keeps up")
	fs.StringVar(&p.cipher, "cipher", "", "comma-separated `SUITES` in preference order, from: "+suiteNames()+"\n(default "+defaultSuites()+"; reduced-round suites are used only if both ends list them)")
	fs.StringVar(&p.context, "context", "", "name of this tunnel (up to 255 bytes), bound into every handshake; both ends must give the same one.\nTunnels that share a key need distinct contexts, or one can be redirected into another")
	fs.BoolVarP(&p.noPFS, "no-pfs", "f", false, "skip the X25519 exchange (faster handshakes, no forward secrecy; spiped's -f)")
	fs.BoolVarP(&p.requirePFS, "require-pfs", "g", false, "refuse peers that skip the X25519 exchange (spiped's -g)")
	fs.IntVar(&p.padTo, "pad", 0, "pad every frame to a multiple of `N` bytes, hiding write sizes (0: off)")
	fs.IntVarP(&p.maxConns, "max-conns", "n", 100, "`N` connections handled at once; more wait until one ends (0: no limit, as spiped's -n 0)")
	p.handshakeTimeout = 10 * time.Second
	fs.VarP(durationValue{&p.handshakeTimeout}, "handshake-timeout", "o", "time allowed for a handshake, and for dialling the target; a bare number is seconds (spiped's -o)")
	fs.DurationVar(&p.idleTimeout, "idle-timeout", 0, "close connections idle this long in both directions (0: never)")
	fs.DurationVar(&p.shutdownTimeout, "shutdown-timeout", 10*time.Second, "on SIGINT/SIGTERM, time open connections get to finish")
	fs.BoolVarP(&p.noKeepAlive, "no-keepalive", "j", false, "turn TCP keep-alives off (spiped's -j)")
	fs.StringVarP(&p.bind, "bind", "b", "", "source `IP` address (optionally :port) for outgoing connections")
	fs.StringVar(&p.socketMode, "socket-mode", "0660", "permissions (octal `MODE`) of a Unix socket created for -s")
	fs.StringVarP(&p.pidFile, "pidfile", "p", "", "write the process ID to `FILE` and lock it: a second instance with the same FILE fails")
	fs.StringVar(&p.metrics, "metrics", "", "serve Prometheus metrics at http://`ADDR`/metrics (ADDR: host:port or systemd:NAME)")
	fs.BoolVar(&p.accessLog, "access-log", false, "log one info line per finished connection: peer, key fingerprint, suite,\nforward secrecy, bytes each way, duration and how it ended")
	fs.BoolVarP(&p.foreground, "foreground", "F", false, "accepted for spiped command lines: spipe always runs in the foreground")
	fs.BoolVarP(&p.daemonize, "daemonize", "D", false, "refused: spipe does not daemonize to wait for DNS (run it under systemd)")
	_ = fs.MarkHidden("foreground")
	_ = fs.MarkHidden("daemonize")
}

// options parses the flags into service options and checks them with
// Validate. Every error is a usage error naming the flag.
func (p *pipeFlags) options(mode service.Mode) (service.Options, error) {
	o := service.Options{
		Mode:                  mode,
		KeyFiles:              p.keys,
		Context:               p.context,
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
		AccessLog:             p.accessLog,
		Mux:                   p.mux,
		MuxCarriers:           p.muxCarriers,
		MuxStreams:            p.muxStreams,
		MuxWindow:             p.muxWindow,
	}
	if p.daemonize {
		return o, usagef("-D: spipe does not daemonize; run it in the foreground under systemd (units in contrib/systemd) or another supervisor. It resolves the target at each connection, so it never waits for DNS at start")
	}
	var err error
	if p.source != "" {
		a, err := engine.ParseAddr(p.source)
		if err != nil {
			return o, usagef("-s/--source: %v", err)
		}
		o.Source = &a
	}
	if p.target != "" {
		if o.Target, err = engine.ParseAddr(p.target); err != nil {
			return o, usagef("-t/--target: %v", err)
		}
	}
	if p.bind != "" {
		if o.BindSource, err = engine.ParseSourceIP(p.bind); err != nil {
			return o, usagef("-b/--bind: %v", err)
		}
	}
	if p.cipher != "" {
		if o.Suites, err = parseCipher(p.cipher); err != nil {
			return o, err
		}
	}
	if p.metrics != "" {
		a, err := engine.ParseAddr(p.metrics)
		if err != nil {
			return o, usagef("--metrics %q: want host:port", p.metrics)
		}
		o.MetricsAddr = &a
	}
	mode64, err := strconv.ParseUint(p.socketMode, 8, 32)
	if err != nil || mode64 > 0o777 {
		return o, usagef("--socket-mode %q: want octal permissions such as 0660 that let the owner read and write", p.socketMode)
	}
	o.SocketMode = os.FileMode(mode64)
	if err := o.Validate(); err != nil {
		return o, usageError{err}
	}
	return o, nil
}

// runPipe starts the service (every start-up error comes out here, before
// anything serves) and runs it until SIGINT or SIGTERM; SIGHUP reloads
// the key files (a stdio connection ignores it: ssh sends it to its
// ProxyCommand on exit).
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
	return svc.Run(ctx, hup)
}
