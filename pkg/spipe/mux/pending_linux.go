package mux

import (
	"io"
	"syscall"

	"golang.org/x/sys/unix"
)

// pending reports whether r has bytes to read right now, and whether it
// can tell: a socket is asked how many bytes it holds (SIOCINQ), a
// reader with a Len (bytes.Reader, strings.Reader, bytes.Buffer) says.
// ReadFrom sends a stream's open with its first data only when that data
// is already there, so a peer that speaks first never waits for a read
// that will not return.
func pending(r io.Reader) (ready, known bool) {
	switch v := r.(type) {
	case interface{ Len() int }:
		return v.Len() > 0, true
	case syscall.Conn:
		raw, err := v.SyscallConn()
		if err != nil {
			return false, false
		}
		var n int
		cerr := raw.Control(func(fd uintptr) { n, err = unix.IoctlGetInt(int(fd), unix.SIOCINQ) })
		if cerr != nil || err != nil {
			return false, false
		}
		return n > 0, true
	}
	return false, false
}
