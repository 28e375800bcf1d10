package engine

import (
	"errors"

	"github.com/spipe-dev/spipe/pkg/spipe"
)

// protocolReasons are the labels of the spipe protocol's failures, most
// specific first. They are the engine's own policy: stable strings for
// log lines and metric labels, chosen here, not by the protocol package.
var protocolReasons = []struct {
	err    error
	reason string
}{
	{spipe.ErrVersion, "version"},
	{spipe.ErrAuthentication, "auth"},
	{spipe.ErrNoSharedSuite, "suite"},
	{spipe.ErrForwardSecrecyRequired, "pfs_required"},
	{spipe.ErrUnsupportedMode, "mode"},
	{spipe.ErrMalformedHandshake, "malformed_handshake"},
	{spipe.ErrTampered, "tampered"},
	{spipe.ErrTruncated, "truncated"},
	{spipe.ErrFrameTooLarge, "frame_too_large"},
	{spipe.ErrMalformedFrame, "malformed_frame"},
	{spipe.ErrCounterExhausted, "counter_exhausted"},
}

// protocolReason classifies errors of the spipe protocol; "" if err is
// not one.
func protocolReason(err error) string {
	for _, p := range protocolReasons {
		if errors.Is(err, p.err) {
			return p.reason
		}
	}
	return ""
}
