package spipe

import "sync"

// Frame buffers are pooled by length: a connection takes them on first use
// and gives them back once its direction has ended, or, for the big tier
// (see tiers), once its stream pauses. So short connections (a handshake
// and a few frames) do not each allocate and clear about 160 KiB for the
// garbage collector, which at thousands of connections per second cost
// more CPU than the handshake, and a bulk stream that pauses gives its big
// buffers back. The lengths come only from this side's own Config (its
// MaxPayload and padding), never from what a peer announces, so a process
// has as many pools as it has distinct settings. A pooled buffer may hold
// another connection's bytes; nothing beyond what a connection itself
// read or sealed into it is ever used.
//
// A buffer travels as the pointer the pool holds, so taking one and
// giving it back allocates nothing.
var bufPools sync.Map // int (buffer length) -> *sync.Pool of *[]byte

func poolOf(size int) *sync.Pool {
	if p, ok := bufPools.Load(size); ok {
		return p.(*sync.Pool)
	}
	p, _ := bufPools.LoadOrStore(size, new(sync.Pool))
	return p.(*sync.Pool)
}

// getBuf returns a buffer of length size.
func getBuf(size int) *[]byte {
	if b, ok := poolOf(size).Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, size)
	return &b
}

// putBuf gives b back; the caller must not use it again.
func putBuf(b *[]byte) {
	poolOf(len(*b)).Put(b)
}
