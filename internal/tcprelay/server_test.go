package tcprelay

import (
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCloseResetsAndWaits: connections are numbered in accept order,
// Close resets every connection a handler is still on (the client sees a
// reset, not a clean end) and returns only once the handlers have.
func TestCloseResetsAndWaits(t *testing.T) {
	numbers := make(chan int, 2)
	returned := make(chan struct{}, 2)
	s, err := Serve("127.0.0.1:0", func(_ *Server, n int, c *net.TCPConn) {
		numbers <- n
		io.Copy(io.Discard, c) // until Close resets it
		returned <- struct{}{}
	})
	require.NoError(t, err)
	var clients []net.Conn
	for want := range 2 {
		c, err := net.Dial("tcp", s.Addr())
		require.NoError(t, err)
		defer c.Close()
		clients = append(clients, c)
		assert.Equal(t, want, <-numbers)
	}
	require.NoError(t, s.Close())
	assert.Len(t, returned, 2, "Close returned before its handlers")
	for _, c := range clients {
		require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
		_, err := c.Read(make([]byte, 1))
		assert.ErrorIs(t, err, syscall.ECONNRESET)
	}
	_, err = net.Dial("tcp", s.Addr())
	assert.Error(t, err, "still accepting after Close")
}
