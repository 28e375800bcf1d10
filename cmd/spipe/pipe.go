package main

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"strings"
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
	maxConnsWait         time.Duration
	maxPending           int
	maxPendingPerSource  int
	acceptProxyFrom      []string
	handshakeTimeout     time.Duration
	idleTimeout          time.Duration
	shutdownTimeout      time.Duration
	drainDelay           time.Duration
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
	// spiped's -F, accepted and ignored: spipe always runs in the
	// foreground.
	foreground bool
	// The flag set, for spiped's flags that spipe refuses (spipedOnly).
	fs *pflag.FlagSet
}

// spipedOnly are spiped's flags (spiped(1)) that spipe has no use for:
// each is accepted by the parser, hidden from the help, and refused with
// one line naming the spipe way, so that a spiped command line moved over
// gets an answer, not "unknown shorthand flag".
var spipedOnly = []struct {
	long, short string
	arg         bool // takes a value, as spiped's does
	fix         string
}{
	{"daemonize", "D", false, "-D: spipe does not daemonize; run it in the foreground under systemd (units in contrib/systemd) or another supervisor. " +
		"It resolves the target at each connection, so it never waits for DNS at start"},
	{"resolve-every", "r", true, "-r: spipe resolves the target again for every connection, so there is no interval to set; drop -r"},
	{"no-resolve", "R", false, "-R: spipe resolves the target for every connection; to keep one address, give -t an IP address"},
	{"user", "u", true, "-u: spipe does not change its user; start it as the user it should run as " +
		"(User= or DynamicUser= in a systemd unit, as contrib/systemd's units do)"},
	{"syslog", "", false, "--syslog: spipe logs to stderr, which journald collects under systemd; " +
		"for another collector, --log-format json"},
}

func (p *pipeFlags) register(fs *pflag.FlagSet, mode service.Mode) {
	if mode == service.Listen {
		fs.StringVarP(&p.source, "source", "s", "", "`ADDR` to accept encrypted connections on: host:port, [v6]:port, /abs/unix.sock,\nor systemd / systemd:NAME for a socket passed by systemd (required)")
		fs.StringVarP(&p.target, "target", "t", "", "`ADDR` to forward the plaintext to: host:port or /abs/unix.sock (required)")
		fs.StringArrayVarP(&p.keys, "key", "k", nil, "key `FILE` (repeat to admit several keys during rotation; - reads it from stdin)")
		fs.BoolVar(&p.proxyProtocol, "proxy-protocol", false, "send a PROXY protocol v2 header to the target with the client's address")
		fs.IntVar(&p.maxPending, "max-pending", 0, "`N` handshakes in progress at once; when full, a new connection cuts the oldest handshake of the\naddress holding the most (0: --max-conns or 1024, whichever is larger)")
		fs.IntVar(&p.maxPendingPerSource, "max-pending-per-source", 0, "`N` handshakes in progress at once from one address (IPv6: one /64); a new one cuts that\naddress's oldest (0: 128 or --max-conns, whichever is larger, but at most --max-pending)")
		fs.StringArrayVar(&p.acceptProxyFrom, "accept-proxy-from", nil, "`CIDR` of load balancers whose connections begin with a PROXY header (v1 or v2) naming the\nclient, whose address then counts for --max-pending-per-source, logs and --proxy-protocol;\nfrom there a connection without a valid header is closed (repeat, or separate with commas)")
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
	fs.IntVarP(&p.maxConns, "max-conns", "n", 100, "`N` connections handled at once; more wait for a place, up to --max-conns-wait (0: no limit, as spiped's -n 0)")
	p.maxConnsWait = 10 * time.Second
	fs.Var(durationValue{&p.maxConnsWait}, "max-conns-wait", "how long a connection waits for a --max-conns place before it is reset and logged; a bare number\nis seconds (0: no wait)")
	p.handshakeTimeout = 10 * time.Second
	fs.VarP(durationValue{&p.handshakeTimeout}, "handshake-timeout", "o", "time allowed for a handshake, and for dialling the target; a bare number is seconds (spiped's -o)")
	fs.DurationVar(&p.idleTimeout, "idle-timeout", 0, "close connections idle this long in both directions (0: never)")
	fs.DurationVar(&p.shutdownTimeout, "shutdown-timeout", 10*time.Second, "on SIGINT/SIGTERM, time open connections get to finish (a second signal: none)")
	fs.DurationVar(&p.drainDelay, "drain-delay", 2*time.Second, "with --metrics: on SIGINT/SIGTERM, /healthz answers 503 at once and new connections are still\naccepted for D, so a load balancer moves them elsewhere first; then --shutdown-timeout begins (0: none)")
	fs.BoolVarP(&p.noKeepAlive, "no-keepalive", "j", false, "turn TCP keep-alives off (spiped's -j)")
	fs.StringVarP(&p.bind, "bind", "b", "", "source `IP` address (optionally :port) for outgoing connections")
	fs.StringVar(&p.socketMode, "socket-mode", "0660", "permissions (octal `MODE`) of a Unix socket created for -s")
	fs.StringVarP(&p.pidFile, "pidfile", "p", "", "write the process ID to `FILE` and lock it: a second instance with the same FILE fails")
	fs.StringVar(&p.metrics, "metrics", "", "serve Prometheus metrics at http://`ADDR`/metrics (ADDR: host:port or systemd:NAME)")
	fs.BoolVar(&p.accessLog, "access-log", false, "log one info line per finished connection: peer, key fingerprint, suite,\nforward secrecy, bytes each way, duration and how it ended")
	fs.BoolVarP(&p.foreground, "foreground", "F", false, "accepted for spiped command lines: spipe always runs in the foreground")
	_ = fs.MarkHidden("foreground")
	for _, f := range spipedOnly {
		if f.arg {
			fs.StringP(f.long, f.short, "", "refused: spiped's; "+f.fix)
		} else {
			fs.BoolP(f.long, f.short, false, "refused: spiped's; "+f.fix)
		}
		_ = fs.MarkHidden(f.long)
	}
	p.fs = fs
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
		MaxConnsWait:          p.maxConnsWait,
		MaxPending:            p.maxPending,
		MaxPendingPerSource:   p.maxPendingPerSource,
		HandshakeTimeout:      p.handshakeTimeout,
		IdleTimeout:           p.idleTimeout,
		ShutdownTimeout:       p.shutdownTimeout,
		DrainDelay:            p.drainDelay,
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
	for _, f := range spipedOnly {
		if p.fs != nil && p.fs.Changed(f.long) {
			return o, usagef("%s", f.fix)
		}
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
	for _, v := range p.acceptProxyFrom {
		for _, cidr := range strings.Split(v, ",") {
			n, err := parseNetwork(strings.TrimSpace(cidr))
			if err != nil {
				return o, usagef("--accept-proxy-from: %v", err)
			}
			o.AcceptProxyFrom = append(o.AcceptProxyFrom, n)
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

// parseNetwork parses a network in CIDR notation, or a single address (a
// /32 or /128). Host bits set after the prefix are refused, as the likely
// typo they are; IPv4 networks are written as such, not mapped into IPv6.
func parseNetwork(s string) (netip.Prefix, error) {
	if ip, err := netip.ParseAddr(s); err == nil && ip.Zone() == "" {
		return netip.PrefixFrom(ip, ip.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return p, fmt.Errorf("%q: want a network such as 10.0.0.0/24 or 2001:db8::/64, or one address", s)
	}
	if p.Addr().Is4In6() {
		return p, fmt.Errorf("%q: write IPv4 networks in IPv4 notation, such as 10.0.0.0/24", s)
	}
	if p != p.Masked() {
		return p, fmt.Errorf("%q has bits set past the /%d: did you mean %s or %s/%d?", s, p.Bits(), p.Masked(), p.Addr(), p.Addr().BitLen())
	}
	return p, nil
}

// runPipe starts the service (every start-up error comes out here, before
// anything serves) and runs it until SIGINT or SIGTERM, which start its
// shutdown; a second one stops it at once. SIGHUP reloads the key files
// (a stdio connection ignores it: ssh sends it to its ProxyCommand on
// exit).
func (a *app) runPipe(cmd *cobra.Command, p *pipeFlags, mode service.Mode) error {
	opts, err := p.options(mode)
	if err != nil {
		return err
	}
	opts.Stdin, opts.Stdout = a.stdin, a.stdout
	stopSignals := make(chan os.Signal, 2)
	signal.Notify(stopSignals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(stopSignals)
	ctx, shutdown := context.WithCancel(cmd.Context())
	defer shutdown()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	svc, err := service.Start(ctx, opts, a.log)
	if err != nil {
		return err
	}
	ran := make(chan struct{})
	defer close(ran)
	go func() {
		for n := 0; ; n++ {
			select {
			case <-stopSignals:
			case <-ran:
				return
			}
			if n == 0 {
				shutdown()
			} else {
				svc.Abort()
			}
		}
	}()
	return svc.Run(ctx, hup)
}
