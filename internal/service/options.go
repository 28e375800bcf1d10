// Package service runs "spipe listen" and "spipe connect": it loads the
// keys, opens the sockets (so every start-up error comes before anything
// serves), then runs the forwarding engine with metrics, a PID file and
// key reloading until its context ends.
package service

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/spipe-dev/spipe/internal/engine"
	"github.com/spipe-dev/spipe/internal/keyring"
	"github.com/spipe-dev/spipe/pkg/aead"
	"github.com/spipe-dev/spipe/pkg/spipe"
	"github.com/spipe-dev/spipe/pkg/spipe/mux"
)

// Mode says which way a service encrypts.
type Mode int

const (
	// Listen accepts spipe connections and forwards plaintext.
	Listen Mode = iota
	// Connect accepts plaintext (or uses stdin/stdout) and forwards it to a
	// spipe listener.
	Connect
)

// String returns "listen" or "connect", the command's name.
func (m Mode) String() string {
	if m == Listen {
		return "listen"
	}
	return "connect"
}

// Options is everything the command line sets, already parsed. Validate
// says whether they make sense together; Start checks them again.
type Options struct {
	Mode Mode
	// Source is where to accept connections; nil in Connect mode means one
	// connection over Stdin/Stdout.
	Source *engine.Addr
	Target engine.Addr
	// KeyFiles are the -k arguments; "-" reads the key from Stdin.
	KeyFiles []string
	Stdin    io.ReadCloser
	Stdout   io.WriteCloser

	// Context names the tunnel; it is bound into every handshake, so both
	// ends must give the same one.
	Context               string
	Suites                []aead.Suite // nil: the protocol's default
	DisableForwardSecrecy bool
	RequireForwardSecrecy bool
	PadTo                 int

	MaxConns int // 0: no limit (spiped's -n 0)
	// MaxConnsWait is how long a connection (or stream) may wait for one
	// of the MaxConns places before it is reset; 0: it is reset at once.
	MaxConnsWait     time.Duration
	MaxPending       int // 0: the engine's default
	HandshakeTimeout time.Duration
	IdleTimeout      time.Duration
	ShutdownTimeout  time.Duration
	NoKeepAlive      bool
	BindSource       *net.TCPAddr
	SocketMode       fs.FileMode
	ProxyProtocol    bool

	// DrainDelay, with MetricsAddr, is how long a service that was told
	// to stop (Run's context ends) goes on accepting while /healthz
	// answers 503, so that a load balancer probing it sends new
	// connections elsewhere before it stops accepting; then the
	// ShutdownTimeout grace begins. Without MetricsAddr nothing can see
	// the drain, and there is none.
	DrainDelay time.Duration

	// MaxPendingPerSource caps a source's handshakes in progress (see
	// engine.Forwarder); 0: the engine's default.
	MaxPendingPerSource int
	// AcceptProxyFrom (listen only) lists the load balancers' networks
	// whose connections begin with a PROXY header naming the client
	// (engine.Forwarder.AcceptProxyFrom).
	AcceptProxyFrom []netip.Prefix

	// Mux (connect only) carries every connection as a stream of one of
	// MuxCarriers carriers kept open to the listener.
	Mux         bool
	MuxCarriers int // 0: 1
	// MuxStreams caps the streams of one carrier: those a connect opens
	// on it, those a listener accepts on it (0: 1000).
	MuxStreams int
	// MuxWindow is the most one stream may have in flight toward this
	// side once its window has grown (mux.Config.MaxStreamWindow; 0:
	// 4 MiB).
	MuxWindow int

	PidFile     string
	MetricsAddr *engine.Addr // nil: no metrics
	// AccessLog logs one Info record per connection that passed its
	// handshake, when it ends (engine.Forwarder.AccessLog).
	AccessLog bool
}

// Validate checks the options for missing values, values out of range
// and contradictions. Its errors are meant for the user of the command
// line, so each names the flag to fix.
func (o *Options) Validate() error {
	if o.Target == (engine.Addr{}) {
		return errors.New("-t/--target is required")
	}
	if len(o.KeyFiles) == 0 {
		return errors.New("-k/--key is required")
	}
	if o.Mode == Connect && len(o.KeyFiles) > 1 {
		return errors.New("-k/--key: connect takes one key")
	}
	if o.Mode == Listen && o.Source == nil {
		return errors.New("-s/--source is required")
	}
	if o.Source == nil && slices.Contains(o.KeyFiles, keyring.Stdin) {
		return errors.New("-k - needs -s: without -s, standard input carries the connection")
	}
	if o.Target.IsSystemd() {
		return errors.New("-t/--target: systemd sockets are for listening (-s), not for dialling")
	}
	if !o.Target.IsUnix() && o.Target.Port() == 0 {
		return errors.New("-t/--target: port 0 cannot be dialled")
	}
	if o.DisableForwardSecrecy && o.RequireForwardSecrecy {
		return errors.New("--no-pfs and --require-pfs contradict each other")
	}
	if len(o.Context) > 255 {
		return fmt.Errorf("--context: %d bytes, at most 255", len(o.Context))
	}
	if o.PadTo < 0 || o.PadTo > spipe.DefaultMaxPayload {
		return fmt.Errorf("--pad %d: want 0 to %d", o.PadTo, spipe.DefaultMaxPayload)
	}
	if o.MaxConns < 0 {
		return fmt.Errorf("--max-conns %d: want 0 (no limit) or more", o.MaxConns)
	}
	if o.MaxConnsWait < 0 {
		return fmt.Errorf("--max-conns-wait %v: must not be negative (0: no wait)", o.MaxConnsWait)
	}
	if o.MaxPending < 0 {
		return fmt.Errorf("--max-pending %d: must not be negative", o.MaxPending)
	}
	if o.MaxPendingPerSource < 0 {
		return fmt.Errorf("--max-pending-per-source %d: must not be negative", o.MaxPendingPerSource)
	}
	if o.HandshakeTimeout <= 0 {
		return fmt.Errorf("--handshake-timeout %v: must be positive", o.HandshakeTimeout)
	}
	if o.IdleTimeout < 0 {
		return fmt.Errorf("--idle-timeout %v: must not be negative", o.IdleTimeout)
	}
	if o.ShutdownTimeout < 0 {
		return fmt.Errorf("--shutdown-timeout %v: must not be negative", o.ShutdownTimeout)
	}
	if o.DrainDelay < 0 {
		return fmt.Errorf("--drain-delay %v: must not be negative (0: none)", o.DrainDelay)
	}
	if o.Mode == Connect && len(o.AcceptProxyFrom) > 0 {
		return errors.New("--accept-proxy-from is for listen: connect's clients are local")
	}
	if o.Mode == Listen && (o.Mux || o.MuxCarriers != 0) {
		return errors.New("--mux and --mux-carriers are for connect: listen serves multiplexed clients without them")
	}
	if o.MuxCarriers < 0 || o.MuxCarriers > maxCarriers {
		return fmt.Errorf("--mux-carriers %d: want 1 to %d", o.MuxCarriers, maxCarriers)
	}
	if o.MuxCarriers > 0 && !o.Mux {
		return errors.New("--mux-carriers needs --mux")
	}
	if o.MuxStreams < 0 {
		return fmt.Errorf("--mux-streams %d: must not be negative", o.MuxStreams)
	}
	if w := o.MuxWindow; w != 0 && (w < mux.MinStreamWindow || w > maxMuxWindow) {
		return fmt.Errorf("--mux-window %d: want %d (256 KiB) to %d (16 MiB) bytes", w, mux.MinStreamWindow, maxMuxWindow)
	}
	if o.MetricsAddr != nil && o.MetricsAddr.IsUnix() {
		return fmt.Errorf("--metrics %q: want host:port", o.MetricsAddr)
	}
	if m := o.SocketMode; m != 0 && (m&^fs.ModePerm != 0 || m&0o600 != 0o600) {
		return fmt.Errorf("--socket-mode %04o: want octal permissions such as 0660 that let the owner read and write", m)
	}
	return nil
}

// maxMuxWindow bounds --mux-window: four times the default, so that one
// carrier's growth budget (four windows, docs/PROTOCOL.md 7.8) stays
// within 64 MiB.
const maxMuxWindow = 16 << 20

// maxCarriers bounds --mux-carriers: a handful spreads streams over
// connections (and CPUs of the listener); many would be plain mode.
const maxCarriers = 64

// forwardSecrecy is the protocol's policy for --no-pfs and --require-pfs
// (Validate refuses both at once).
func (o *Options) forwardSecrecy() spipe.ForwardSecrecy {
	switch {
	case o.DisableForwardSecrecy:
		return spipe.ForwardSecrecyOff
	case o.RequireForwardSecrecy:
		return spipe.ForwardSecrecyRequired
	}
	return spipe.ForwardSecrecyPreferred
}
