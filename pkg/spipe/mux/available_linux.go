package mux

import (
	"io"
	"syscall"

	"golang.org/x/sys/unix"
)

// available reports how many bytes r has to read right now, and whether
// it can tell: a socket is asked how many bytes it holds (SIOCINQ), a
// reader with a Len (bytes.Reader, strings.Reader, bytes.Buffer) says.
// ReadFrom sends a stream's open with its first data only when that data
// is already there, so a peer that speaks first never waits for a read
// that will not return; and it reads into a large frame only what is
// already there to fill it, so a large buffer is never held across a
// read that waits.
func available(r io.Reader) (n int, known bool) {
	switch v := r.(type) {
	case interface{ Len() int }:
		return v.Len(), true
	case syscall.Conn:
		raw, err := v.SyscallConn()
		if err != nil {
			return 0, false
		}
		cerr := raw.Control(func(fd uintptr) { n, err = unix.IoctlGetInt(int(fd), unix.SIOCINQ) })
		if cerr != nil || err != nil {
			return 0, false
		}
		return n, true
	}
	return 0, false
}
