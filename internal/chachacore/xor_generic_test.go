package chachacore

import (
	"testing"
)

// BenchmarkXORBlocksGeneric measures the generic kernel alone, without the
// dispatch and buffering above it, for tuning generic.go.
func BenchmarkXORBlocksGeneric(b *testing.B) {
	var s State
	Init(&s, make([]byte, 32), make([]byte, 12))
	buf := make([]byte, 64<<10)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		xorBlocksGeneric(&s, 20, buf, buf)
	}
}
