// Package service runs "spipe listen" and "spipe connect": it loads the
// keys, opens the sockets (so every start-up error comes before anything
// serves), then runs the forwarding engine with metrics, a PID file and
// key reloading until its context ends.
package service

import (
	"io"
	"io/fs"
	"net"
	"time"

	"github.com/spipe-dev/spipe/internal/engine"
	"github.com/spipe-dev/spipe/pkg/spipe"
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

// Options is everything the command line sets, already parsed.
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

	Suites                []spipe.Suite // nil: the protocol's default
	DisableForwardSecrecy bool
	RequireForwardSecrecy bool
	PadTo                 int

	MaxConns         int
	MaxPending       int // 0: the engine's default
	HandshakeTimeout time.Duration
	IdleTimeout      time.Duration
	ShutdownTimeout  time.Duration
	NoKeepAlive      bool
	BindSource       *net.TCPAddr
	SocketMode       fs.FileMode
	ProxyProtocol    bool

	// MaxPendingPerSource caps a source's handshakes in progress (see
	// engine.Forwarder); 0: the engine's default.
	MaxPendingPerSource int

	PidFile     string
	MetricsAddr *engine.Addr // nil: no metrics
}
