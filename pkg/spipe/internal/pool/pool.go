// Package pool holds frame buffers by length, for package spipe's
// connections and package mux's streams.
//
// A connection takes buffers on first use and gives them back once its
// direction has ended, or, for the big tier, once its stream pauses. So
// short connections (a handshake and a few frames) do not each allocate
// and clear about 160 KiB for the garbage collector, which at thousands of
// connections per second cost more CPU than the handshake, and a bulk
// stream that pauses gives its big buffers back. The lengths come only
// from this side's own configuration, never from what a peer announces,
// so a process has as many pools as it has distinct settings, a handful.
// A pooled buffer may hold another user's bytes; nothing beyond what its
// user itself read or sealed into it is ever used.
//
// Taking a buffer and giving it back allocate nothing: a buffer travels as
// the pointer the pool holds, and the pools are found by a scan of a list
// that is copied only when a new length appears (a map keyed by the
// length would box the key on every lookup).
package pool

import (
	"sync"
	"sync/atomic"
)

type sizedPool struct {
	size int
	pool sync.Pool // of *[]byte
}

var (
	poolsMu sync.Mutex                   // serializes adding a pool
	pools   atomic.Pointer[[]*sizedPool] // never modified once stored
)

func poolOf(size int) *sync.Pool {
	if p := findPool(size); p != nil {
		return p
	}
	poolsMu.Lock()
	defer poolsMu.Unlock()
	if p := findPool(size); p != nil {
		return p
	}
	var list []*sizedPool
	if l := pools.Load(); l != nil {
		list = *l
	}
	list = append(list[:len(list):len(list)], &sizedPool{size: size})
	pools.Store(&list)
	return &list[len(list)-1].pool
}

func findPool(size int) *sync.Pool {
	if l := pools.Load(); l != nil {
		for _, p := range *l {
			if p.size == size {
				return &p.pool
			}
		}
	}
	return nil
}

// Get returns a buffer of length size.
func Get(size int) *[]byte {
	if b, ok := poolOf(size).Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, size)
	return &b
}

// Put gives b back; the caller must not use it again.
func Put(b *[]byte) {
	poolOf(len(*b)).Put(b)
}
