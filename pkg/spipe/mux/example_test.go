package mux_test

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/spipe-dev/spipe/pkg/spipe"
	"github.com/spipe-dev/spipe/pkg/spipe/mux"
)

// Example runs a server that accepts plain and multiplexed clients on one
// listener and echoes every stream, and a client that opens three streams
// over one connection: one handshake, then a stream per request, each
// costing no round trip to open. The spipe handshake comes first on both
// ends: spipe.Dial runs the client's, and the server runs its own before
// it looks at the mode the client asked for (mux.Client and mux.Server
// would run a handshake that has not run yet themselves).
func Example() {
	key, err := spipe.NewKey([]byte("4f1c0a6e2b9d83f7a5c6e01d2b3f4a5c6d7e8f9012a3b4c5d6e7f8091a2b3c4d\n"))
	if err != nil {
		panic(err)
	}
	config := &spipe.Config{Keys: []*spipe.Key{key}, Context: "example mux", Multiplex: true}

	ln, err := spipe.Listen("tcp", "127.0.0.1:0", config)
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c.(*spipe.Conn))
		}
	}()

	conn, err := spipe.Dial("tcp", ln.Addr().String(), config)
	if err != nil {
		panic(err)
	}
	session, err := mux.Client(conn, nil) // conn's handshake is done: Dial ran it
	if err != nil {
		panic(err)
	}
	defer session.Close()
	for _, msg := range []string{"one", "two", "three"} {
		stream, err := session.Open(context.Background())
		if err != nil {
			panic(err)
		}
		stream.Write([]byte(msg))
		stream.(*mux.Stream).CloseWrite() // the clean end of this direction
		reply, err := io.ReadAll(stream)
		stream.Close() // both directions ended: a clean close
		fmt.Printf("%s (err=%v)\n", reply, err)
	}
	// Output:
	// one (err=<nil>)
	// two (err=<nil>)
	// three (err=<nil>)
}

// serve runs one accepted connection: a multiplexed one as a session of
// echoed streams, a plain one as a single echoed stream.
func serve(conn *spipe.Conn) {
	// The handshake first: only then does the connection say which mode
	// it runs (and only a client that proved the key gets this far).
	if err := conn.Handshake(); err != nil {
		return
	}
	if !conn.ConnectionState().Multiplexed {
		echo(conn)
		return
	}
	session, err := mux.Server(conn, nil)
	if err != nil {
		return
	}
	defer session.Close()
	for {
		stream, err := session.Accept()
		if err != nil {
			return // the client closed the session
		}
		go echo(stream.(*mux.Stream))
	}
}

// echo copies c back to itself, then ends its direction cleanly; if the
// copy fails, Close aborts the stream and the peer sees the failure.
func echo(c interface {
	net.Conn
	CloseWrite() error
}) {
	defer c.Close()
	if _, err := io.Copy(c, c); err == nil {
		c.CloseWrite()
	}
}
