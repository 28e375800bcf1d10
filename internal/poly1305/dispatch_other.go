//go:build !amd64 || !gc || purego

package poly1305

// updateBlocks absorbs whole blocks of msg (len(msg) a multiple of 16).
func updateBlocks(st *state, msg []byte) { blocksGeneric(st, msg) }

// updateBlocksTail absorbs the whole blocks of msg and then those of tail.
func updateBlocksTail(st *state, msg, tail []byte) {
	blocksGeneric(st, msg)
	blocksGeneric(st, tail)
}
