package engine

import (
	"net"

	"golang.org/x/sys/unix"
)

// resetAfterEOF reports whether a TCP connection whose read just returned
// EOF was in fact reset. Linux reports a reset once, to whichever call
// meets it first: when the other direction's write takes it, this
// direction's read sees a plain EOF, and without this check the end of a
// cut stream would be forwarded as a clean one (an authenticated
// close-write toward a spipe peer). The socket's state tells the two
// apart: a peer's FIN leaves it in CLOSE_WAIT (or TIME_WAIT, if our side
// had finished first), a reset in CLOSE.
//
// A socket that can no longer be asked counts as reset: its descriptor is
// closed only when the pipe is being aborted (the other direction's write
// took the reset and closed both sides between our EOF and this check),
// and forwarding that end as clean is exactly the mistake this guards
// against.
func resetAfterEOF(c net.Conn) bool {
	if _, ok := c.(*net.TCPConn); !ok {
		return false
	}
	var state uint8
	ok := control(c, func(fd int) error {
		info, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
		if err == nil {
			state = info.State
		}
		return err
	})
	return !ok || state == tcpClose
}

// tcpClose is the kernel's TCP_CLOSE socket state (include/net/tcp_states.h).
const tcpClose = 7
