package testutil

import (
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

// TCPPair returns the two ends of a fresh loopback TCP connection: the
// dialling one and the accepted one. The test's cleanup closes both.
func TCPPair(t testing.TB) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept() // nil on failure, which the check below reports
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	server = <-accepted
	require.NotNil(t, server, "accept failed")
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}
