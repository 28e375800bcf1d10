package engine

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// peerUID returns the user ID of the process at the other end of c.
func peerUID(c *net.UnixConn) (uint32, bool) {
	var cred *unix.Ucred
	ok := control(c, func(fd int) (err error) {
		cred, err = unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
		return err
	})
	if !ok {
		return 0, false
	}
	return cred.Uid, true
}

// unread returns how many bytes c's socket has received that nobody has
// read yet.
func unread(c net.Conn) (int, bool) {
	var n int
	ok := control(c, func(fd int) (err error) {
		n, err = unix.IoctlGetInt(fd, unix.SIOCINQ)
		return err
	})
	return n, ok
}

// peek copies into p what c's socket has received that nobody has read
// yet, leaving it there, without waiting for more.
func peek(c net.Conn, p []byte) (int, bool) {
	var n int
	ok := control(c, func(fd int) (err error) {
		n, _, err = unix.Recvfrom(fd, p, unix.MSG_PEEK|unix.MSG_DONTWAIT)
		return err
	})
	if !ok {
		return 0, false // n is -1 on an error, EAGAIN for an empty socket among them
	}
	return n, true
}

// control runs f on c's file descriptor and reports whether both worked.
func control(c net.Conn, f func(fd int) error) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
		return false
	}
	return ferr == nil
}
