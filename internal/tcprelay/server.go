// Package tcprelay is what the proxies of the tests and benchmarks
// (internal/faultproxy, internal/delayproxy) share: an accept loop that
// hands each TCP connection to a handler of its own, keeps track of the
// connections the handlers open, and on Close resets every one of them
// and waits for the handlers to return.
package tcprelay

import (
	"net"
	"sync"
)

// Server accepts connections and runs a handler for each.
type Server struct {
	ln    net.Listener
	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// Serve listens on addr and calls handle on its own goroutine for every
// accepted connection, with the connection's number (0 for the first)
// and the server (handle may run before Serve returns). The accepted
// connection is tracked while handle runs.
func Serve(addr string, handle func(s *Server, n int, c *net.TCPConn)) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for n := 0; ; n++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer s.Track(c)()
				handle(s, n, c.(*net.TCPConn))
			}()
		}
	}()
	return s, nil
}

// Addr is the address clients connect to.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Track adds c to the connections Close resets, until the function it
// returns is called.
func (s *Server) Track(c net.Conn) (untrack func()) {
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}
}

// Close stops accepting, resets every tracked connection and waits for
// the handlers to return.
func (s *Server) Close() error {
	err := s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		Reset(c)
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

// Reset closes c with a TCP reset rather than a FIN.
func Reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	c.Close()
}
