package spipe_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/spipe-dev/spipe/pkg/spipe"
)

// exampleKey stands in for LoadKeyFile("/etc/spipe/key"): both ends need
// byte-identical key material with 256 bits of entropy.
func exampleKey() *spipe.Key {
	key, err := spipe.NewKey([]byte("4f1c0a6e2b9d83f7a5c6e01d2b3f4a5c6d7e8f9012a3b4c5d6e7f8091a2b3c4d\n"))
	if err != nil {
		panic(err)
	}
	return key
}

// Example runs an echo server and a client over loopback TCP.
func Example() {
	config := &spipe.Config{Keys: []*spipe.Key{exampleKey()}, Context: "example echo"}

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
		conn := c.(*spipe.Conn)
		defer conn.Close()
		// The client has proven the key once the handshake succeeds.
		if err := conn.Handshake(); err != nil {
			return
		}
		io.Copy(conn, conn)
		conn.CloseWrite()
	}()

	conn, err := spipe.Dial("tcp", ln.Addr().String(), config)
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	conn.Write([]byte("hello through the pipe"))
	conn.CloseWrite() // authenticated end of our direction
	reply, err := io.ReadAll(conn)
	state := conn.ConnectionState()
	fmt.Printf("%s (err=%v, suite=%s, forward secrecy=%v)\n", reply, err, state.Suite, state.ForwardSecrecy)
	// Output: hello through the pipe (err=<nil>, suite=chacha20-poly1305, forward secrecy=true)
}

// ExampleConn_CloseWrite shows the two ways a sender ends a stream: after
// a complete copy it calls CloseWrite, and the receiver reads io.EOF; on
// an error path it only closes, and the receiver sees ErrTruncated, never
// a stream that looks complete.
func ExampleConn_CloseWrite() {
	config := &spipe.Config{Keys: []*spipe.Key{exampleKey()}}
	send := func(conn *spipe.Conn, src io.Reader) error {
		defer conn.Close() // on an error path, the peer sees truncation
		if _, err := io.Copy(conn, src); err != nil {
			return err
		}
		return conn.CloseWrite() // only now is the stream complete
	}

	for _, src := range []io.Reader{
		strings.NewReader("the whole file"),
		io.MultiReader(strings.NewReader("half a file"), failingReader{}),
	} {
		a, b := net.Pipe()
		go send(spipe.Client(a, config), src)
		got, err := io.ReadAll(spipe.Server(b, config))
		fmt.Printf("%q complete=%v truncated=%v\n", got, err == nil, errors.Is(err, spipe.ErrTruncated))
	}
	// Output:
	// "the whole file" complete=true truncated=false
	// "half a file" complete=false truncated=true
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk error") }

// ExampleDialer dials with a deadline and a net.Dialer of its own (a
// source address, keep-alives); the context bounds the TCP connect and the
// handshake.
func ExampleDialer() {
	config := &spipe.Config{Keys: []*spipe.Key{exampleKey()}, ForwardSecrecy: spipe.ForwardSecrecyRequired}
	ln, err := spipe.Listen("tcp", "127.0.0.1:0", config)
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.(*spipe.Conn).Handshake()
			c.Close()
		}
	}()

	d := &spipe.Dialer{
		NetDialer: &net.Dialer{KeepAlive: 30 * time.Second},
		Config:    config,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		panic(err)
	}
	defer c.Close()
	fmt.Println("forward secrecy:", c.(*spipe.Conn).ConnectionState().ForwardSecrecy)
	// Output: forward secrecy: true
}
