//go:build !amd64 || !gc || purego

package poly1305

// powers is what a kernel derives from the key once per MAC: nothing for
// the generic code.
type powers struct{}

// updateBlocks absorbs whole blocks of msg (len(msg) a multiple of 16).
// The generic code has no powers to keep.
func updateBlocks(st *state, _ *powers, msg []byte) { blocksGeneric(st, msg) }
