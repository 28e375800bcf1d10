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
// TCP_NODELAY, and keep-alives unless turned off or, for a dialled one, on
// loopback. An accepted connection has them from its listening socket,
// with Go's timings.
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
		assert.Equal(t, want, sockopt(t, in, syscall.SOL_SOCKET, syscall.SO_KEEPALIVE), "accepted keepalive (off=%v)", off)
		if !off {
			assert.Equal(t, int(keepAliveIdle.Seconds()), sockopt(t, in, syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE), "accepted keep-alive idle")
			assert.Equal(t, int(keepAliveInterval.Seconds()), sockopt(t, in, syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL), "accepted keep-alive interval")
			assert.Equal(t, keepAliveCount, sockopt(t, in, syscall.IPPROTO_TCP, syscall.TCP_KEEPCNT), "accepted keep-alive count")
		}
		assert.Equal(t, 0, sockopt(t, dialled, syscall.SOL_SOCKET, syscall.SO_KEEPALIVE), "dialled keepalive on loopback (off=%v)", off)
		for name, c := range map[string]net.Conn{"accepted": in, "dialled": dialled} {
			assert.Equal(t, 1, sockopt(t, c, syscall.IPPROTO_TCP, syscall.TCP_NODELAY), "%s nodelay", name)
		}
		in.Close()
		dialled.Close()
		ln.Close()
	}
}

// TestKeepAliveWorthwhile: keep-alives for every TCP peer but one on
// loopback.
func TestKeepAliveWorthwhile(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:1": false, "127.3.2.1:1": false, "[::1]:1": false, "[::ffff:127.0.0.1]:1": false,
		"192.0.2.1:1": true, "[2001:db8::1]:1": true, "[::ffff:192.0.2.1]:1": true,
	} {
		a, err := net.ResolveTCPAddr("tcp", addr)
		require.NoError(t, err)
		assert.Equal(t, want, keepAliveWorthwhile(a), addr)
	}
	assert.False(t, keepAliveWorthwhile(&net.UnixAddr{Name: "/x", Net: "unix"}), "not TCP")
}
