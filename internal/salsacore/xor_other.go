//go:build !amd64 || !gc || purego

package salsacore

// xorArch is never reached without assembly kernels: only the generic
// implementation is registered.
func xorArch(kernelID, *State, int, []byte, []byte) {
	panic("salsacore: no assembly kernels in this build")
}
