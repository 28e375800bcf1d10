package engine

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"syscall"

	"github.com/spipe-dev/spipe/pkg/spipe/mux"
)

// The reasons Reason gives. They are the engine's vocabulary for log lines
// and metric labels, stable so that alerts and greps keep working; the
// protocol's failures get names of their own (protocol.go).
const (
	reasonShutdown    = "shutdown"
	reasonIdle        = "idle"
	reasonTimeout     = "timeout"
	reasonDNS         = "dns"
	reasonRefused     = "refused"
	reasonReset       = "reset"
	reasonUnreachable = "unreachable"
	reasonEOF         = "eof"
	reasonOther       = "other"
	// A handshake the admission table cut: its place went to a newer
	// connection, or its first message was not in by the deadline.
	reasonEvicted      = "evicted"
	reasonHelloTimeout = "hello_timeout"
	// A connection from a trusted load balancer whose PROXY header was
	// missing, malformed or late.
	reasonProxyHeader = "proxy_header"
	// A stream whose carrier ended before it did (it was reset), and a
	// carrier whose peer broke the multiplexing protocol.
	reasonCarrier     = "carrier"
	reasonMuxProtocol = "mux_protocol"
)

// Reason sorts a connection failure into a short, stable class for logs
// and metric labels: one of the protocol's (see protocol.go: "auth",
// "tampered", ...) or "timeout", "refused", "reset", "eof", "idle",
// "shutdown", "unreachable", "dns" or "other"; a handshake the admission
// table cut is "evicted", "hello_timeout" or "shutdown"; a missing,
// malformed or late PROXY header from a trusted balancer is
// "proxy_header"; a stream whose
// carrier ended first is "carrier", a stream its peer reset "reset", and
// a carrier whose peer broke the multiplexing "mux_protocol". It returns
// "" for nil.
func Reason(err error) string {
	// A cut handshake fails with whatever its closed socket made of it;
	// the cut is the reason.
	if cut, ok := errors.AsType[*cutError](err); ok {
		return Reason(cut.cause)
	}
	switch {
	case errors.Is(err, errEvicted):
		return reasonEvicted
	case errors.Is(err, errHelloTimeout):
		return reasonHelloTimeout
	case errors.Is(err, errProxyHeader):
		return reasonProxyHeader
	case errors.Is(err, mux.ErrSessionClosed):
		return reasonCarrier
	case errors.Is(err, mux.ErrStreamReset):
		return reasonReset
	case errors.Is(err, mux.ErrProtocol):
		return reasonMuxProtocol
	}
	if r := protocolReason(err); r != "" {
		return r
	}
	var dnsErr *net.DNSError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, errShutdown), errors.Is(err, context.Canceled):
		// The engine cancels a connection's context only to close it at
		// shutdown.
		return reasonShutdown
	case errors.Is(err, errIdle):
		return reasonIdle
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return reasonTimeout
	case errors.As(err, &dnsErr):
		return reasonDNS
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ENOENT):
		return reasonRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return reasonReset
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return reasonUnreachable
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return reasonEOF
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return reasonTimeout
	}
	return reasonOther
}

// ReasonSets lists, for each kind of failure an Observer hears of, the
// reasons Reason gives it, so that metrics can show every series at zero
// from start-up and alerts see a series before the first failure. A
// failure nothing here foresaw still gets a reason ("other" at worst);
// it is just not listed in advance.
type ReasonSets struct {
	Handshake []string // Observer.Handshake
	Dial      []string // Observer.DialError
	Transfer  []string // Observer.TransferError
	Frame     []string // the transfer failures IsFrameError picks
}

// Reasons returns the engine's reason sets.
func Reasons() ReasonSets {
	return ReasonSets{
		Handshake: append(protocolReasons(inHandshake),
			reasonTimeout, reasonReset, reasonEOF, reasonShutdown, reasonEvicted, reasonHelloTimeout, reasonProxyHeader, reasonOther),
		Dial: []string{reasonRefused, reasonUnreachable, reasonDNS, reasonTimeout, reasonReset,
			reasonShutdown, reasonOther},
		Transfer: append(protocolReasons(inFrame),
			reasonReset, reasonEOF, reasonIdle, reasonTimeout, reasonShutdown, reasonCarrier, reasonMuxProtocol, reasonOther),
		Frame: protocolReasons(inFrame),
	}
}

// failureLevel is the level of a failed connection's log line. Warn is
// for what an operator should look at: authentication failures, tampering,
// a target that cannot be reached, a server that refuses us. What a busy
// listener sees all day is Info (a client that left mid-stream, an idle
// timeout or a handshake timeout doing their job, the end of the grace
// period) or Debug (a bare connect-and-close: load-balancer health checks,
// port scans, a client that gave up before proving anything).
func (f *Forwarder) failureLevel(stage, reason string) slog.Level {
	switch reason {
	case reasonShutdown, reasonIdle:
		return slog.LevelInfo
	}
	switch stage {
	case stageHandshake:
		if f.SecureSide == SecureOutbound {
			// The server ended our handshake: most likely it refused us.
			return slog.LevelWarn
		}
		switch reason {
		case reasonTruncated, reasonEOF, reasonReset:
			return slog.LevelDebug
		case reasonTimeout:
			return slog.LevelInfo
		}
	case stageTransfer:
		switch reason {
		case reasonTruncated, reasonEOF, reasonReset, reasonCarrier:
			return slog.LevelInfo
		}
	case stageAdmission:
		return slog.LevelInfo
	}
	return slog.LevelWarn
}
