package spipe

import (
	"sync"

	"github.com/spipe-dev/spipe/pkg/spipe/frame"
)

// Frame buffers of the default size are pooled: a connection takes them on
// first use and gives them back once its direction has ended, so short
// connections (a handshake and a few frames) do not each allocate and
// clear about 160 KiB for the garbage collector. At thousands of
// connections per second that churn cost more CPU than the handshake.
// Buffers of other sizes (a non-default MaxPayload) are simply allocated.
// A pooled buffer may hold another connection's bytes; nothing beyond what
// a connection itself read or sealed into it is ever used.
type bufPool struct {
	size int
	pool sync.Pool // of *[]byte
}

var (
	readBufs  = bufPool{size: DefaultMaxPayload + frame.Overhead + readAhead}
	writeBufs = bufPool{size: DefaultMaxPayload + frame.Overhead}
)

// get returns a buffer of length size.
func (p *bufPool) get(size int) []byte {
	if size == p.size {
		if b, ok := p.pool.Get().(*[]byte); ok {
			return *b
		}
	}
	return make([]byte, size)
}

// put gives b back; the caller must not use it again.
func (p *bufPool) put(b []byte) {
	if cap(b) != p.size {
		return
	}
	b = b[:cap(b)]
	p.pool.Put(&b)
}
