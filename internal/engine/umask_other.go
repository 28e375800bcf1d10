//go:build !unix

package engine

// withUmask runs f; there is no umask here, so the chmod after it is all
// that sets the socket's permission.
func withUmask(_ int, f func() error) error { return f() }
