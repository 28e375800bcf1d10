// Package testhook reaches into package spipe for the tests of the
// packages under pkg/spipe (package mux's transcript test replays
// published sessions, which needs their randomness). Package spipe sets
// the hooks at initialization; nothing outside pkg/spipe can import this
// package, and nothing but tests calls it.
package testhook

import "io"

// WithRand makes config, a *spipe.Config, draw its nonces and ephemeral
// keys from r instead of crypto/rand.
var WithRand func(config any, r io.Reader)
