//go:build !linux

package engine

import "net"

// listenConfig shapes a TCP listener whose accepted connections have
// keep-alives unless off, set on each accepted connection.
func listenConfig(off bool) net.ListenConfig {
	if off {
		return net.ListenConfig{KeepAlive: -1}
	}
	return net.ListenConfig{KeepAliveConfig: keepAliveConfig}
}
