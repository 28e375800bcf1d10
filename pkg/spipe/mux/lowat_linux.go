package mux

import (
	"net"

	"golang.org/x/sys/unix"
)

// limitNotSent sets TCP_NOTSENT_LOWAT on the carrier's socket (see
// notSentLowat).
func limitNotSent(c net.Conn) {
	tc := tcpOf(c)
	if tc == nil {
		return
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return
	}
	_ = raw.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT, notSentLowat)
	})
}

// tcpOf digs the TCP connection out from under c, if there is one.
func tcpOf(c net.Conn) *net.TCPConn {
	for {
		if tc, ok := c.(*net.TCPConn); ok {
			return tc
		}
		nc, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return nil
		}
		c = nc.NetConn()
	}
}
