package engine

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// listenConfig shapes a TCP listener whose accepted connections have
// keep-alives unless off. Linux copies SO_KEEPALIVE and the keep-alive
// timings of a listening socket to every connection it accepts, so they
// are set once on the listening socket, not with four system calls per
// accepted connection as Go's ListenConfig does.
func listenConfig(off bool) net.ListenConfig {
	lc := net.ListenConfig{KeepAlive: -1}
	if !off {
		lc.Control = func(_, _ string, c syscall.RawConn) error {
			var err error
			cerr := c.Control(func(fd uintptr) { err = setKeepAlive(int(fd)) })
			if cerr != nil {
				return cerr
			}
			return err
		}
	}
	return lc
}

func setKeepAlive(fd int) error {
	for _, o := range []struct{ level, opt, v int }{
		{unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1},
		{unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, int(keepAliveIdle.Seconds())},
		{unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, int(keepAliveInterval.Seconds())},
		{unix.IPPROTO_TCP, unix.TCP_KEEPCNT, keepAliveCount},
	} {
		if err := unix.SetsockoptInt(fd, o.level, o.opt, o.v); err != nil {
			return err
		}
	}
	return nil
}
