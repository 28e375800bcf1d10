//go:build race

package mux

// raceEnabled: the race detector makes sync.Pool drop a share of what it
// is given, on purpose, so pooled buffers are sometimes allocated anew.
const raceEnabled = true
