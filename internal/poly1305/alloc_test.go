package poly1305

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestZeroAllocs checks that neither the one-shot Sum nor a MAC from New
// (used the way pkg/aead uses it) allocates, on every kernel, for short
// and vector-sized messages.
func TestZeroAllocs(t *testing.T) {
	var key [KeySize]byte
	msg := make([]byte, 4096+7)
	forEachKernel(t, func(t *testing.T) {
		var tag [TagSize]byte
		allocs := testing.AllocsPerRun(20, func() {
			Sum(&tag, msg, &key)
			m := New(&key)
			m.Write(msg[:3])
			m.Write(msg[3:])
			m.Verify(tag[:])
			m.Sum(tag[:0])
		})
		assert.Zero(t, allocs)
	})
}
