package mux

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/spipe"
)

// TestWireMessages: what the library puts in the carrier's byte stream
// for one stream and a deliberate close is what docs/PROTOCOL.md 7.1
// describes, message by message (pings, which either end sends when it
// likes, left out): the open (a window update with SYN) and the data
// right behind it, each direction's FIN, the server's ACK, and the
// client's go away last. testdata/protocol-v2 holds the same messages in
// sealed frames.
func TestWireMessages(t *testing.T) {
	var mu sync.Mutex
	sent := map[bool][]string{}
	testOnWrite = func(client bool) func([]byte) {
		return func(p []byte) {
			for len(p) >= 12 {
				typ, n := p[1], binary.BigEndian.Uint32(p[8:12])
				if typ == 2 { // ping
					p = p[12:]
					continue
				}
				body := 0
				if typ == 0 {
					body = int(n)
				}
				mu.Lock()
				sent[client] = append(sent[client], fmt.Sprintf("type=%d flags=%d stream=%d length=%d %q",
					typ, binary.BigEndian.Uint16(p[2:4]), binary.BigEndian.Uint32(p[4:8]), n, p[12:12+body]))
				mu.Unlock()
				p = p[12+body:]
			}
		}
	}
	defer func() { testOnWrite = nil }()

	a, b := net.Pipe()
	key, err := spipe.NewKey([]byte("0123456789abcdef0123456789abcdef"))
	require.NoError(t, err)
	cfg := &spipe.Config{Keys: []*spipe.Key{key}, Multiplex: true}
	srvc := make(chan *Session, 1)
	go func() {
		s, err := Server(spipe.Server(b, cfg), nil)
		if err != nil {
			b.Close()
		}
		srvc <- s
	}()
	cli, err := Client(spipe.Client(a, cfg), nil)
	require.NoError(t, err)
	srv := <-srvc
	require.NotNil(t, srv)

	st, err := cli.Open(context.Background())
	require.NoError(t, err)
	_, err = st.Write([]byte("hello, server"))
	require.NoError(t, err)
	require.NoError(t, st.(*Stream).CloseWrite())
	ss, err := srv.Accept()
	require.NoError(t, err)
	got, err := io.ReadAll(ss)
	require.NoError(t, err)
	assert.Equal(t, "hello, server", string(got))
	_, err = ss.Write([]byte("hello, client"))
	require.NoError(t, err)
	require.NoError(t, ss.(*Stream).CloseWrite())
	got, err = io.ReadAll(st)
	require.NoError(t, err)
	assert.Equal(t, "hello, client", string(got))
	require.NoError(t, st.Close())
	require.NoError(t, ss.Close())
	require.NoError(t, cli.Close())
	<-srv.Done()

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{
		`type=1 flags=1 stream=1 length=0 ""`,
		`type=0 flags=0 stream=1 length=13 "hello, server"`,
		`type=1 flags=4 stream=1 length=0 ""`,
		`type=3 flags=0 stream=0 length=0 ""`,
	}, sent[true], "the client's messages")
	assert.Equal(t, []string{
		`type=1 flags=2 stream=1 length=0 ""`,
		`type=0 flags=0 stream=1 length=13 "hello, client"`,
		`type=1 flags=4 stream=1 length=0 ""`,
	}, sent[false], "the server's messages")
}
