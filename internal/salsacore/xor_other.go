//go:build !amd64 || !gc || purego

package salsacore

import "github.com/spipe-dev/spipe/internal/impl"

// xorArch is never reached without assembly kernels: only the generic
// implementation is registered.
func xorArch(impl.ID, *State, int, []byte, []byte) {
	panic("salsacore: no assembly kernels in this build")
}
