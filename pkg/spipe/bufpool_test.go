package spipe

import (
	"io"
	"net"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShortConnectionsReuseFrameBuffers: connections that exchange a byte
// each way and end cleanly give their frame buffers back, so a stream of
// them allocates far less than the ~320 KiB of frame buffers each pair
// uses.
func TestShortConnectionsReuseFrameBuffers(t *testing.T) {
	cfg := &Config{Keys: []*Key{newTestKey(t)}, ForwardSecrecy: ForwardSecrecyOff}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	oneConn := func() {
		a, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		b, err := ln.Accept()
		require.NoError(t, err)
		cli, srv := Client(a, cfg), Server(b, cfg)
		done := make(chan error, 1)
		go func() {
			defer srv.Close()
			var one [1]byte
			if _, err := io.ReadFull(srv, one[:]); err != nil {
				done <- err
				return
			}
			if _, err := srv.Write(one[:]); err != nil {
				done <- err
				return
			}
			if err := srv.CloseWrite(); err != nil {
				done <- err
				return
			}
			_, err := io.Copy(io.Discard, srv) // to the client's close-write
			done <- err
		}()
		defer cli.Close()
		_, err = cli.Write([]byte{42})
		require.NoError(t, err)
		require.NoError(t, cli.CloseWrite())
		got, err := io.ReadAll(cli)
		require.NoError(t, err)
		require.Equal(t, []byte{42}, got)
		require.NoError(t, <-done)
	}
	oneConn() // the pools hold a set of buffers from here on
	const n = 100
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		oneConn()
	}
	runtime.ReadMemStats(&after)
	perConn := (after.TotalAlloc - before.TotalAlloc) / n
	buffers := uint64(readBufSize(DefaultMaxPayload)+writeBufSize(DefaultMaxPayload)) * 2
	t.Logf("%d bytes allocated per connection; its frame buffers are %d", perConn, buffers)
	// Not zero: under the race detector sync.Pool drops a quarter of what
	// it is given, on purpose. Without reuse each connection allocates all
	// of its buffers, and more.
	assert.Less(t, perConn, buffers*3/5, "frame buffers are not reused")
}
