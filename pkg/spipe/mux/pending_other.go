//go:build !linux

package mux

import "io"

// pending reports whether r has bytes to read right now, and whether it
// can tell: here only a reader with a Len (bytes.Reader, strings.Reader,
// bytes.Buffer) can say; for anything else ReadFrom sends a stream's
// open on its own before reading.
func pending(r io.Reader) (ready, known bool) {
	if v, ok := r.(interface{ Len() int }); ok {
		return v.Len() > 0, true
	}
	return false, false
}
