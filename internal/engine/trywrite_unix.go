//go:build unix

package engine

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// TryWrite writes what the destination socket takes of p at once, without
// waiting: a multiplexed stream's read loop writes arriving data through
// it straight from the frame while the copy's WriteTo waits, which saves
// the copy into the stream's buffer and the hand-off to this copy's
// goroutine (see mux.Stream.WriteTo). It returns 0 without error when
// the socket takes nothing now, or the destination is not a socket.
func (w *watchedWriter) TryWrite(p []byte) (int, error) {
	sc, ok := w.w.(syscall.Conn)
	if !ok {
		return 0, nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, nil
	}
	var n int
	var werr error
	if err := raw.Write(func(fd uintptr) bool {
		n, werr = unix.Write(int(fd), p)
		return true
	}); err != nil {
		werr = err
	}
	if errors.Is(werr, unix.EAGAIN) || errors.Is(werr, unix.EINTR) {
		n, werr = max(n, 0), nil
	}
	n = max(n, 0)
	if n > 0 {
		w.idle.touch()
		w.obs.Bytes(w.toTarget, n)
	}
	if werr != nil {
		w.err = werr
	}
	return n, werr
}
