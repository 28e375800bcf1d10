package engine

import (
	"errors"

	"github.com/spipe-dev/spipe/pkg/spipe"
)

// Where a protocol failure can arise.
const (
	inHandshake = 1 << iota
	inFrame
)

// reasonTruncated is also a reason of the engine's own: a handshake or
// stream that ended without the protocol's authenticated end.
const reasonTruncated = "truncated"

// protocolFailures names the protocol's sentinel errors for logs and
// metric labels, most specific first. The names are the engine's, not the
// protocol's: pkg/spipe only says what failed, and how the tool labels it
// is policy of the tool. This table is the engine's only knowledge of the
// protocol's errors.
var protocolFailures = []struct {
	err    error
	reason string
	where  int
}{
	{spipe.ErrVersion, "version", inHandshake},
	{spipe.ErrAuthentication, "auth", inHandshake},
	{spipe.ErrNoSharedSuite, "suite", inHandshake},
	{spipe.ErrForwardSecrecyRequired, "pfs_required", inHandshake},
	{spipe.ErrUnsupportedMode, "mode", inHandshake},
	{spipe.ErrMalformedHandshake, "malformed_handshake", inHandshake},
	{spipe.ErrTampered, "tampered", inFrame},
	{spipe.ErrTruncated, reasonTruncated, inHandshake | inFrame},
	{spipe.ErrFrameTooLarge, "frame_too_large", inFrame},
	{spipe.ErrMalformedFrame, "malformed_frame", inFrame},
	{spipe.ErrCounterExhausted, "counter_exhausted", inFrame},
}

// protocolReason names an error of the spipe protocol; "" if err is not
// one.
func protocolReason(err error) string {
	for _, p := range protocolFailures {
		if errors.Is(err, p.err) {
			return p.reason
		}
	}
	return ""
}

// protocolReasons lists the reasons of the failures that arise where says.
func protocolReasons(where int) []string {
	var r []string
	for _, p := range protocolFailures {
		if p.where&where != 0 {
			r = append(r, p.reason)
		}
	}
	return r
}

// IsFrameError reports whether err is the protocol rejecting a frame
// (tampered, truncated, oversize, malformed, counter exhausted), as
// opposed to a socket failing: whether Reason names it so. A stream
// whose carrier failed on a frame is not one (its reason is "carrier"):
// the frame is counted once, as the carrier's.
func IsFrameError(err error) bool {
	reason := Reason(err)
	for _, p := range protocolFailures {
		if p.where&inFrame != 0 && p.reason == reason {
			return true
		}
	}
	return false
}
