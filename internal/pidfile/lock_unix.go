//go:build unix

package pidfile

import (
	"os"

	"golang.org/x/sys/unix"
)

var errWouldBlock error = unix.EWOULDBLOCK

// lock takes an exclusive lock on f without waiting; the kernel drops it
// when the process exits, however it exits.
func lock(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EINTR {
			return err
		}
	}
}
