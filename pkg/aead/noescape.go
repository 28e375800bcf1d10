package aead

import "unsafe"

// The cores dispatch to their kernel through a function value, so the
// compiler must assume a kernel keeps the pointers it is given, and every
// cipher state or scratch block passed to one would be moved to the heap:
// two or three allocations per Seal. Kernels only read and write their
// arguments during the call, so hiding the pointers from escape analysis is
// sound; it is the runtime's own noescape, spelled so that go vet accepts
// it. The allocation tests (TestNoAllocs) hold this file to its promise.

// noescape returns p, hidden from escape analysis.
func noescape[T any](p *T) *T {
	addr := uintptr(unsafe.Pointer(p))
	return *(**T)(unsafe.Pointer(&addr))
}

// noescapeBytes returns b, its backing array hidden from escape analysis.
func noescapeBytes(b []byte) []byte {
	return unsafe.Slice(noescape(unsafe.SliceData(b)), len(b))
}
