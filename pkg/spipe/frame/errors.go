package frame

import "errors"

// Errors returned by Open and Size. pkg/spipe returns three of the same
// values (spipe.ErrTampered is ErrTampered, spipe.ErrFrameTooLarge is
// ErrTooLarge, spipe.ErrMalformedFrame is ErrMalformed), so errors.Is
// works across both packages for them. ErrTruncated is not
// spipe.ErrTruncated: a connection ends without its authenticated close
// in ways a frame alone cannot show.
var (
	// ErrTampered: the frame failed authentication under this key and
	// counter: it was modified, or it is not frame number counter of this
	// direction (dropped, duplicated, reordered or injected frames all
	// land here). No byte of it was written anywhere.
	ErrTampered = errors.New("frame failed authentication (tampered, reordered, dropped or duplicated)")

	// ErrTooLarge: a header announces an inner plaintext above the
	// receiver's limit. It is detected from the header alone, before
	// anything is read or allocated for the payload.
	ErrTooLarge = errors.New("frame larger than the maximum payload")

	// ErrMalformed: an authentic frame whose inner plaintext breaks the
	// format: no type byte (all zeros), an unknown type, or data in a
	// close-write or keepalive frame. Only a holder of the key can cause it.
	ErrMalformed = errors.New("malformed frame")

	// ErrTruncated: fewer bytes than the frame's header announces.
	ErrTruncated = errors.New("frame cut short")
)
