//go:build !linux

package mux

import "io"

// available reports how many bytes r has to read right now, and whether
// it can tell: here only a reader with a Len (bytes.Reader,
// strings.Reader, bytes.Buffer) can say; for anything else ReadFrom sends
// a stream's open on its own before reading, and sizes its frames by
// what its reads return.
func available(r io.Reader) (n int, known bool) {
	if v, ok := r.(interface{ Len() int }); ok {
		return v.Len(), true
	}
	return 0, false
}
