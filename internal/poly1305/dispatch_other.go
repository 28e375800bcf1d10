//go:build !amd64 || !gc || purego

package poly1305

// updateBlocks absorbs whole blocks of msg (len(msg) a multiple of 16).
func updateBlocks(st *state, msg []byte) { blocksGeneric(st, msg) }
