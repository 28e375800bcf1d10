//go:build !amd64 || !gc || purego

package chachacore

import "github.com/spipe-dev/spipe/internal/impl"

// xorBlocks XORs len(src)/BlockSize key stream blocks into dst with the
// generic implementation, the only one without assembly kernels, and
// advances the low counter word modulo 2^32.
func xorBlocks(s *State, rounds int, dst, src []byte, _ impl.ID) {
	xorBlocksGeneric(s, rounds, dst, src)
}

// headFused is false: without assembly no kernel takes the head.
func headFused(impl.ID) bool { return false }

// headArch never runs a kernel without assembly: XORKeyStreamHead does the
// two steps itself.
func headArch(impl.ID, *State, int, *[BlockSize]byte, []byte, []byte) int { return 0 }
