//go:build !amd64 || !gc || purego

package chachacore

// xorArch is never reached without assembly kernels: only the generic
// implementation is registered.
func xorArch(kernelID, *State, int, []byte, []byte) {
	panic("chachacore: no assembly kernels in this build")
}
