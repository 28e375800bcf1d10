package engine

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// Reason sorts a connection failure into a short, stable class for logs
// and metric labels: "timeout", "refused", "reset", "eof", "idle",
// "shutdown", "unreachable", "dns" or "other" (protocol errors are added
// by the protocol's own classes); a handshake the admission table cut is
// "evicted" (its place went to a newer connection), "hello_timeout" (its
// first message was not in by the deadline) or "shutdown".
func Reason(err error) string {
	// A cut handshake fails with whatever its closed socket made of it;
	// the cut is the reason.
	if cut, ok := errors.AsType[*cutError](err); ok {
		return Reason(cut.cause)
	}
	switch {
	case errors.Is(err, errEvicted):
		return "evicted"
	case errors.Is(err, errHelloTimeout):
		return "hello_timeout"
	}
	if r := protocolReason(err); r != "" {
		return r
	}
	var dnsErr *net.DNSError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, errShutdown):
		return "shutdown"
	case errors.Is(err, errIdle):
		return "idle"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	case errors.As(err, &dnsErr):
		return "dns"
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ENOENT):
		return "refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "reset"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "unreachable"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "eof"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	return "other"
}
