package spipe

import "io"

// WithRand makes c draw its nonces and ephemeral keys from r instead of
// crypto/rand, for the transcript tests (package spipe_test), which replay
// published sessions byte for byte.
func WithRand(c *Config, r io.Reader) *Config {
	c.rand = r
	return c
}
