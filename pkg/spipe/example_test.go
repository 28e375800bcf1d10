package spipe_test

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spipe-dev/spipe/pkg/spipe"
)

// Example runs an echo server and a client over loopback TCP. Both ends
// load the same key (here from a string; in practice LoadKeyFile).
func Example() {
	key, err := spipe.ReadKey(strings.NewReader("0123456789abcdef0123456789abcdef0123456789abcdef"))
	if err != nil {
		panic(err)
	}
	config := &spipe.Config{Keys: []*spipe.Key{key}}

	ln, err := spipe.Listen("tcp", "127.0.0.1:0", config)
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		conn := c.(*spipe.Conn)
		// The client has proven the key once Handshake returns nil.
		if err := conn.Handshake(context.Background()); err != nil {
			return
		}
		io.Copy(conn, conn)
		conn.CloseWrite()
	}()

	conn, err := spipe.Dial(context.Background(), "tcp", ln.Addr().String(), config)
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	conn.Write([]byte("hello through the pipe"))
	conn.CloseWrite() // authenticated end of our direction
	reply, err := io.ReadAll(conn)
	fmt.Printf("%s (err=%v, suite=%s, forward secrecy=%v)\n", reply, err,
		conn.ConnectionState().Suite, conn.ConnectionState().ForwardSecrecy)
	// Output: hello through the pipe (err=<nil>, suite=chacha20-poly1305, forward secrecy=true)
}
