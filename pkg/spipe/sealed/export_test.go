package sealed

import "io"

// WithRand makes a Writer draw its salt from r instead of crypto/rand, for
// the vector tests (package sealed_test), which rebuild published files
// byte for byte.
func WithRand(o *Options, r io.Reader) *Options {
	o.rand = r
	return o
}
