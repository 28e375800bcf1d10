//go:build !linux

package engine

import "net"

// resetAfterEOF reports whether a TCP connection whose read just returned
// EOF was in fact reset; only Linux is asked (reset_linux.go).
func resetAfterEOF(net.Conn) bool { return false }
