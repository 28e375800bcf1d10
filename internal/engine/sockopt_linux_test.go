package engine

import (
	"context"
	"net"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sockopt(t *testing.T, c net.Conn, level, opt int) int {
	t.Helper()
	rc, err := c.(syscall.Conn).SyscallConn()
	require.NoError(t, err)
	var v int
	var serr error
	require.NoError(t, rc.Control(func(fd uintptr) { v, serr = syscall.GetsockoptInt(int(fd), level, opt) }))
	require.NoError(t, serr)
	return v
}

// TestSocketOptions: accepted and dialled TCP connections have
// TCP_NODELAY, and keep-alives unless turned off.
func TestSocketOptions(t *testing.T) {
	for _, off := range []bool{false, true} {
		ln, err := Listen(context.Background(), Addr{Network: "tcp", Address: "127.0.0.1:0"}, ListenOptions{NoKeepAlive: off})
		require.NoError(t, err)
		accepted := make(chan net.Conn, 1)
		go func() {
			c, err := ln.Accept()
			if err == nil {
				accepted <- c
			}
			close(accepted)
		}()
		d := &TargetDialer{Target: Addr{Network: "tcp", Address: ln.Addr().String()}, NoKeepAlive: off}
		dialled, err := d.Dial(context.Background(), nil)
		require.NoError(t, err)
		in := <-accepted
		require.NotNil(t, in)
		want := 1
		if off {
			want = 0
		}
		for name, c := range map[string]net.Conn{"accepted": in, "dialled": dialled} {
			assert.Equal(t, want, sockopt(t, c, syscall.SOL_SOCKET, syscall.SO_KEEPALIVE), "%s keepalive (off=%v)", name, off)
			assert.Equal(t, 1, sockopt(t, c, syscall.IPPROTO_TCP, syscall.TCP_NODELAY), "%s nodelay", name)
		}
		in.Close()
		dialled.Close()
		ln.Close()
	}
}
