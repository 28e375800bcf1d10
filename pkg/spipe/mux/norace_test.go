//go:build !race

package mux

// raceEnabled: see race_test.go.
const raceEnabled = false
