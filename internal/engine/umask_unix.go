//go:build unix

package engine

import "syscall"

// withUmask runs f with the process umask set to mask. It is meant for
// start-up, before other goroutines create files.
func withUmask(mask int, f func() error) error {
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	return f()
}
