package engine

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"syscall"
	"time"

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
	// A stream whose carrier failed before it ended (it was reset), and a
	// carrier whose peer broke the multiplexing protocol.
	reasonCarrier     = "carrier"
	reasonMuxProtocol = "mux_protocol"
	// A connection (or stream) that found no MaxConns place within
	// MaxConnsWait, and a carrier refused because MaxPending were open.
	reasonLimit        = "limit"
	reasonCarrierLimit = "carrier_limit"
	// A connection of "spipe connect --mux" that found no carrier with
	// room in time, when the last carrier did not fail in its dial.
	reasonNoCarrier = "no_carrier"
)

// How a connection (or stream) that did not fail ended: the "end" of its
// log line and the label of Observer.Ended. A side leaving is the
// application's choice, not the tunnel's failure: a client that resets
// after its last request, closes before reading the whole answer, or a
// server that resets instead of closing (PostgreSQL under TLS does) is
// an end, never a failure.
const (
	// Both directions ended in order: a FIN, or the protocol's
	// authenticated close-write, each way.
	endClosed = "closed"
	// A side went away before that: a TCP reset from a plaintext side or
	// from the spipe peer (which resets the stream when its own plaintext
	// side reset, or failed), met as ECONNRESET, or as EPIPE or ENOTCONN
	// on writing to or shutting down a socket it had reset; a stream its
	// peer reset; a pipe (stdio) whose reader closed.
	endReset = "reset"
	// Cut by this process's own shutdown: at the end of the grace
	// period, or before its transfer began.
	endShutdown = "shutdown"
)

// Reason sorts a connection failure into a short, stable class for logs
// and metric labels: one of the protocol's (see protocol.go: "auth",
// "tampered", ...) or "timeout", "refused", "reset", "eof", "idle",
// "shutdown", "unreachable", "dns" or "other"; a handshake the admission
// table cut is "evicted", "hello_timeout" or "shutdown"; a missing,
// malformed or late PROXY header from a trusted balancer is
// "proxy_header"; a connection
// that found no place under MaxConns in time is "limit", a carrier
// refused for MaxPending "carrier_limit"; a stream whose carrier failed
// first is "carrier", a stream its peer reset "reset", and a carrier
// whose peer broke the multiplexing "mux_protocol"; a connection of
// "spipe connect --mux" that found no carrier is "no_carrier", unless the
// last carrier failed in its dial (then that dial's reason). It returns
// "" for nil. Whether an error is a failure at all is endOf's business.
func Reason(err error) string {
	// A cut handshake fails with whatever its closed socket made of it;
	// the cut is the reason.
	if cut, ok := errors.AsType[*cutError](err); ok {
		return Reason(cut.cause)
	}
	switch {
	case errors.Is(err, errNoCarrier):
		// The connection's own failure to find a carrier: a dial
		// failure, whose reason is the last carrier's dial failure as a
		// plain connection's would be; its handshake's failure (or every
		// carrier full) is another matter, counted as the carrier's.
		if nc, ok := errors.AsType[*noCarrierError](err); ok && errors.Is(nc.last, errDial) {
			return Reason(nc.last)
		}
		return reasonNoCarrier
	case errors.Is(err, errEvicted):
		return reasonEvicted
	case errors.Is(err, errHelloTimeout):
		return reasonHelloTimeout
	case errors.Is(err, errProxyHeader):
		return reasonProxyHeader
	case errors.Is(err, errLimit):
		return reasonLimit
	case errors.Is(err, errCarrierLimit):
		return reasonCarrierLimit
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
	case peerLeft(err):
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

// peerLeft reports whether err only says that the other end of a socket,
// stream or pipe went away: a TCP reset (ECONNRESET), a write to a socket
// it reset (EPIPE; Linux reports a reset that arrives after the peer's
// FIN that way), a shutdown of one it reset (ENOTCONN), a stream its peer
// reset, a pipe whose reader closed.
func peerLeft(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ENOTCONN) || errors.Is(err, mux.ErrStreamReset) ||
		errors.Is(err, io.ErrClosedPipe)
}

// isShutdown reports whether err is a connection closed by this process's
// shutdown (see Reason).
func isShutdown(err error) bool { return err != nil && Reason(err) == reasonShutdown }

// endOf says how a connection whose transfer returned err (nil: both
// directions ended) ended, or false if err is a failure, which Reason
// names. The same event gives the same answer at both ends: a side that
// leaves is an end where it leaves, and the reset the pipe then sends is
// an end at the other spipe as well.
func endOf(err error) (how string, ok bool) {
	switch {
	case err == nil:
		return endClosed, true
	case isShutdown(err):
		return endShutdown, true
	case peerLeft(err):
		return endReset, true
	}
	return "", false
}

// carrierCloseWait bounds how long closedByPeer waits for a closing
// carrier to say why it closed.
const carrierCloseWait = time.Second

// closedByPeer reports whether err, a stream's, is its carrier (c, nil
// for a plain connection) closed on purpose: by the peer's shutdown, say,
// whose reset of its streams may reach this side after the carrier's
// end. That stream was reset by the peer, like a plain connection cut at
// the peer's shutdown; a stream of a carrier that failed, whose failure
// is counted once as the carrier's, fails with reason "carrier".
func closedByPeer(c Carrier, err error) bool {
	if c == nil || !errors.Is(err, mux.ErrSessionClosed) {
		return false
	}
	t := time.NewTimer(carrierCloseWait)
	defer t.Stop()
	select {
	case <-c.Done():
		return c.Err() == nil
	case <-t.C:
		return false
	}
}

// ReasonSets lists, for each kind of failure an Observer hears of, the
// reasons Reason gives it, and the ends it hears of, so that metrics can
// show every series at zero from start-up and alerts see a series before
// the first failure. A failure nothing here foresaw still gets a reason
// ("other" at worst); it is just not listed in advance.
type ReasonSets struct {
	Handshake []string // Observer.Handshake
	Dial      []string // Observer.DialError
	Admission []string // Observer.AdmissionError
	Transfer  []string // Observer.TransferError
	Frame     []string // the transfer and carrier failures IsFrameError picks
	Carrier   []string // Observer.CarrierFailed
	// CarrierOpen has the reasons of Observer.CarrierOpenFailed for each
	// of its stages ("dial", "handshake").
	CarrierOpen map[string][]string
	Ends        []string // Observer.Ended
}

// Reasons returns the engine's reason sets.
func Reasons() ReasonSets {
	dial := []string{reasonRefused, reasonUnreachable, reasonDNS, reasonTimeout, reasonReset, reasonOther}
	// What a client's handshake meets; a server's meets these too, and
	// what its admission table and trusted balancers bring.
	clientHandshake := append(protocolReasons(inHandshake), reasonTimeout, reasonReset, reasonEOF, reasonOther)
	return ReasonSets{
		Handshake: append(slices.Clone(clientHandshake), reasonEvicted, reasonHelloTimeout, reasonProxyHeader),
		Dial:      append(slices.Clone(dial), reasonNoCarrier),
		Admission: []string{reasonLimit, reasonCarrierLimit, reasonOther},
		Transfer: append(protocolReasons(inFrame),
			reasonIdle, reasonTimeout, reasonCarrier, reasonOther),
		Frame: protocolReasons(inFrame),
		Carrier: append(protocolReasons(inFrame),
			reasonReset, reasonEOF, reasonTimeout, reasonMuxProtocol, reasonOther),
		CarrierOpen: map[string][]string{stageDial: dial, stageHandshake: clientHandshake},
		Ends:        []string{endClosed, endReset, endShutdown},
	}
}

// failureLevel is the level of a failure's log line. Warn is for what an
// operator should look at: authentication failures, tampering, a target
// that cannot be reached, a server that refuses us, connections turned
// away at a limit. Info is for a limit doing its job (an idle or
// handshake timeout) and a secure side cut without the protocol's end
// (a peer process that died); Debug for what a listener sees all day
// from peers that proved nothing (load-balancer health checks, port
// scans, handshakes cut under a flood). Ends are not failures: they are
// logged at Debug (Info in the access log) by logEnd.
func (f *Forwarder) failureLevel(stage, reason string) slog.Level {
	switch stage {
	case stageHandshake:
		if f.SecureSide == SecureOutbound {
			// The server ended our handshake: most likely it refused us.
			return slog.LevelWarn
		}
		switch reason {
		case reasonTruncated, reasonEOF, reasonReset, reasonEvicted, reasonHelloTimeout:
			return slog.LevelDebug
		case reasonTimeout:
			return slog.LevelInfo
		}
	case stageTransfer:
		switch reason {
		case reasonTruncated, reasonIdle, reasonCarrier:
			return slog.LevelInfo
		}
	case stageCarrier:
		if f.SecureSide == SecureInbound {
			switch reason {
			case reasonTruncated, reasonEOF, reasonReset:
				// The client's process went away with its carrier.
				return slog.LevelInfo
			}
		}
	}
	return slog.LevelWarn
}
