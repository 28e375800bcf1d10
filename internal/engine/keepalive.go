package engine

import (
	"net"
	"time"
)

// The keep-alive timings of accepted and dialled TCP connections: Go's
// defaults, stated here because on Linux the listening socket carries
// them (see listenConfig).
const (
	keepAliveIdle     = 15 * time.Second
	keepAliveInterval = 15 * time.Second
	keepAliveCount    = 9
)

var keepAliveConfig = net.KeepAliveConfig{Enable: true, Idle: keepAliveIdle, Interval: keepAliveInterval, Count: keepAliveCount}

// keepAliveWorthwhile reports whether keep-alives can tell anything about
// a connection to remote: not on loopback, where both ends are this
// host's kernel, which ends or resets the connection itself when the
// process at the other end goes; there they would only cost four system
// calls per connection.
func keepAliveWorthwhile(remote net.Addr) bool {
	ta, ok := remote.(*net.TCPAddr)
	return ok && !ta.IP.IsLoopback()
}
