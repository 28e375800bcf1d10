package stress

import (
	"io"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil/pipetest"
	"github.com/spipe-dev/spipe/pkg/spipe"
)

// TestSteadyStateAllocations pushes data both ways through an established
// connection of an in-process connect/listen pair (four frame layers: seal
// and open in each direction, plus both engines' copy loops) and counts the
// heap allocations of the whole process meanwhile: well under one per
// hundred frames, i.e. nothing per frame.
func TestSteadyStateAllocations(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := startTarget(t, false)
	_, connect := pipetest.Pair(t, tg.addr(), key, nil)
	c, err := net.Dial("tcp", connect.Addr)
	require.NoError(t, err)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Minute))

	chunk := make([]byte, 64<<10) // one frame per write and per hop
	back := make([]byte, len(chunk))
	push := func(n int) {
		for range n {
			_, err := c.Write(chunk)
			require.NoError(t, err)
			_, err = io.ReadFull(c, back)
			require.NoError(t, err)
		}
	}
	push(16) // every buffer allocated, every goroutine started
	const n = 256
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	push(n)
	runtime.ReadMemStats(&after)
	allocs := after.Mallocs - before.Mallocs
	frames := 2 * n // at least one frame each way per chunk
	t.Logf("%d heap allocations in the whole process while %d frames crossed each frame layer", allocs, frames)
	assert.Less(t, allocs, uint64(frames/100+10), "the pipe allocates per frame")
}

// countingConn counts Write calls on the socket under a spipe.Conn.
type countingConn struct {
	net.Conn
	writes atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestOneWritePerFrame: each frame (header, payload and tag) reaches the
// socket in a single Write, hence a single system call unless the socket
// buffer is full.
func TestOneWritePerFrame(t *testing.T) {
	key, err := spipe.NewKey(make([]byte, 32))
	require.NoError(t, err)
	cfg := &spipe.Config{Keys: []*spipe.Key{key}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	const frames = 100
	read := make(chan int64, 1)
	go func() {
		raw, err := ln.Accept()
		if err != nil {
			read <- -1
			return
		}
		s := spipe.Server(raw, cfg)
		defer s.Close()
		n, _ := io.Copy(io.Discard, s)
		read <- n
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	cc := &countingConn{Conn: raw}
	c := spipe.Client(cc, cfg)
	defer c.Close()
	require.NoError(t, c.Handshake())
	handshakeWrites := cc.writes.Load()
	data := make([]byte, 16<<10)
	for range frames {
		_, err := c.Write(data)
		require.NoError(t, err)
	}
	require.NoError(t, c.CloseWrite())
	assert.Equal(t, int64(frames*len(data)), <-read)
	assert.Equal(t, int64(frames+1), cc.writes.Load()-handshakeWrites, "writes for %d data frames and the close-write", frames)
}
