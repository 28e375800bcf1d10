//go:build !linux

package mux

import "net"

// limitNotSent does nothing where TCP_NOTSENT_LOWAT is not set here.
func limitNotSent(net.Conn) {}
