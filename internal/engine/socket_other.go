//go:build !linux

package engine

import "net"

// peerUID is unknown here: Unix-socket peers share one source.
func peerUID(*net.UnixConn) (uint32, bool) { return 0, false }

// unread is unknown here: the admission table learns that a first
// message is in only when the handshake reads it.
func unread(net.Conn) (int, bool) { return 0, false }

// peek is unknown here too: a PROXY header and first message count as in
// once read.
func peek(net.Conn, []byte) (int, bool) { return 0, false }
