package engine

import (
	"errors"

	"github.com/spipe-dev/spipe/pkg/spipe"
)

// protocolErrors are the spipe failures Reason names by the protocol's own
// class (see spipe.ErrorClass).
var protocolErrors = []error{
	spipe.ErrVersion, spipe.ErrAuthentication, spipe.ErrNoSharedSuite,
	spipe.ErrForwardSecrecyRequired, spipe.ErrMalformedHandshake,
	spipe.ErrTampered, spipe.ErrTruncated, spipe.ErrFrameTooLarge,
	spipe.ErrMalformedFrame, spipe.ErrCounterExhausted, spipe.ErrWriteClosed,
}

// protocolReason classifies errors of the spipe protocol; "" if err is
// not one.
func protocolReason(err error) string {
	for _, e := range protocolErrors {
		if errors.Is(err, e) {
			return spipe.ErrorClass(e)
		}
	}
	return ""
}
