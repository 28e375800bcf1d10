package spipe

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
)

// Sentinel errors. Every error this package returns for a protocol failure
// wraps exactly one of them, so callers tell cases apart with errors.Is (and
// [ErrorClass] names them for logs and metrics). None of them carries key
// material or plaintext. Their text has no package prefix because Conn's
// methods return them wrapped with context, e.g. "spipe: read: frame 3:
// frame failed authentication (...)"; FrameCipher returns them bare.
var (
	// ErrVersion: the peer speaks another protocol version (its first byte
	// is not [Version]).
	ErrVersion = errors.New("peer speaks another protocol version")

	// ErrAuthentication: a handshake message failed its MAC. The peer holds
	// a different key, or the message was modified, replayed, reflected or
	// reordered on the wire; the cases are indistinguishable by design.
	ErrAuthentication = errors.New("handshake authentication failed (wrong key or modified message)")

	// ErrNoSharedSuite: the two configs have no cipher suite in common.
	ErrNoSharedSuite = errors.New("no cipher suite in common")

	// ErrForwardSecrecyRequired: the config requires forward secrecy and the
	// peer did not offer an ephemeral key.
	ErrForwardSecrecyRequired = errors.New("peer refused forward secrecy, which is required")

	// ErrMalformedHandshake: an authentic handshake message that breaks the
	// protocol (unknown flags, impossible suite choice, invalid X25519 key).
	// Only a peer holding the key can cause it.
	ErrMalformedHandshake = errors.New("malformed handshake message")

	// ErrTampered: a frame failed authentication: it was modified, dropped,
	// duplicated, reordered or injected on the wire. No byte of it was
	// returned.
	ErrTampered = errors.New("frame failed authentication (tampered, reordered, dropped or duplicated)")

	// ErrTruncated: the connection ended (TCP EOF) in the middle of a frame
	// or without an authenticated close-write frame, so the stream may have
	// been cut short. During the handshake it means the peer closed the
	// connection, which is also how a server refuses a client.
	ErrTruncated = errors.New("connection ended without authenticated close")

	// ErrFrameTooLarge: a frame header announced a payload above the
	// receiver's maximum. Detected before anything is allocated or read.
	ErrFrameTooLarge = errors.New("frame larger than the maximum payload")

	// ErrMalformedFrame: an authentic frame of unknown type or with invalid
	// padding. Only a peer holding the session key can cause it.
	ErrMalformedFrame = errors.New("malformed frame")

	// ErrCounterExhausted: a direction used up its 2^64-1 frame numbers; the
	// nonce would repeat, so the connection stops.
	ErrCounterExhausted = errors.New("frame counter exhausted")

	// ErrWriteClosed: Write or SendKeepalive after CloseWrite.
	ErrWriteClosed = errors.New("write after CloseWrite")
)

// ErrorClass names the reason class of an error returned by this package, for
// log lines and metric labels. The classes are stable strings:
//
//	"version", "auth", "suite", "pfs_required", "malformed_handshake",
//	"tampered", "truncated", "frame_too_large", "malformed_frame",
//	"counter_exhausted", "write_closed", "timeout", "canceled", "closed",
//	"eof" (a clean authenticated end), "io" (any other I/O error).
//
// It returns "" for a nil error.
func ErrorClass(err error) string {
	if err == nil {
		return ""
	}
	for _, c := range errorClasses {
		if errors.Is(err, c.target) {
			return c.class
		}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	return "io"
}

// errorClasses maps sentinels to classes, most specific first.
var errorClasses = []struct {
	target error
	class  string
}{
	{ErrVersion, "version"},
	{ErrAuthentication, "auth"},
	{ErrNoSharedSuite, "suite"},
	{ErrForwardSecrecyRequired, "pfs_required"},
	{ErrMalformedHandshake, "malformed_handshake"},
	{ErrTampered, "tampered"},
	{ErrTruncated, "truncated"},
	{ErrFrameTooLarge, "frame_too_large"},
	{ErrMalformedFrame, "malformed_frame"},
	{ErrCounterExhausted, "counter_exhausted"},
	{ErrWriteClosed, "write_closed"},
	{context.Canceled, "canceled"},
	{context.DeadlineExceeded, "timeout"},
	{os.ErrDeadlineExceeded, "timeout"},
	{net.ErrClosed, "closed"},
	{io.EOF, "eof"},
}
