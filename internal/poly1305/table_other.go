//go:build !amd64 || !gc || purego

package poly1305

// table is empty without vector kernels.
type table struct{}

// updateBlocks absorbs whole blocks of msg (len(msg) a multiple of 16).
func updateBlocks(st *state, _ *table, msg []byte) { blocksGeneric(st, msg) }
