//go:build !amd64 || !gc || purego

package chachacore

import "github.com/spipe-dev/spipe/internal/impl"

// xorArch is never reached without assembly kernels: only the generic
// implementation is registered.
func xorArch(impl.ID, *State, int, []byte, []byte) {
	panic("chachacore: no assembly kernels in this build")
}

// headArch never runs a kernel without assembly: XORKeyStreamHead does the
// two steps itself.
func headArch(impl.ID, *State, int, *[BlockSize]byte, []byte, []byte) bool { return false }
