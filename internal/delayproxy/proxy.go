// Package delayproxy relays TCP connections with a fixed one-way delay
// each way, modelling a long link on loopback: "make bench-pipe" puts it
// between a client and its server to time a new connection's first byte
// over a 50 ms round trip. It models TCP's own handshake too: a
// connection's server side sees it three one-way delays after the client
// connected (SYN, SYN-ACK, then the ACK with the first data), so a client
// that sends at once has its first bytes arrive 1.5 round trips after its
// connect, as over a real link. It is a measuring tool, not part of
// spipe.
package delayproxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/spipe-dev/spipe/internal/tcprelay"
)

// maxQueued bounds the bytes one direction of a connection holds in
// flight (what a link of the delay would hold): a faster sender then
// waits, as TCP's window makes it.
const maxQueued = 8 << 20

// Proxy accepts TCP connections and relays each to its target with the
// delay. Close stops accepting, resets every relayed connection and waits
// for the relays to end.
type Proxy struct {
	*tcprelay.Server
	target string
	delay  time.Duration
}

// Start listens on addr and relays every connection to target, each
// byte arriving delay after it was sent, in both directions.
func Start(addr, target string, delay time.Duration) (*Proxy, error) {
	p := &Proxy{target: target, delay: delay}
	srv, err := tcprelay.Serve(addr, func(srv *tcprelay.Server, _ int, c *net.TCPConn) { p.relay(srv, c, time.Now()) })
	if err != nil {
		return nil, err
	}
	p.Server = srv
	return p, nil
}

// relay carries one connection accepted at t0. The server side is dialled
// when the client's ACK would reach it (t0 + 3 delays), and the client's
// bytes are held until then too; after that every byte takes one delay.
func (p *Proxy) relay(srv *tcprelay.Server, client *net.TCPConn, t0 time.Time) {
	established := t0.Add(3 * p.delay)
	toServer := newLine(p.delay, established)
	go toServer.read(client)
	time.Sleep(time.Until(established))
	c, err := net.DialTimeout("tcp", p.target, 10*time.Second)
	if err != nil {
		tcprelay.Reset(client)
		toServer.stop()
		return
	}
	server := c.(*net.TCPConn)
	defer srv.Track(server)()
	toClient := newLine(p.delay, time.Time{})
	go toClient.read(server)

	var once sync.Once
	killBoth := func() { once.Do(func() { tcprelay.Reset(client); tcprelay.Reset(server) }) }
	done := make(chan struct{})
	go func() {
		if !toServer.write(server) {
			killBoth()
		}
		close(done)
	}()
	if !toClient.write(client) {
		killBoth()
	}
	<-done
	toServer.stop()
	toClient.stop()
	client.Close()
	server.Close()
}

// chunk is what one read brought in, due at its arrival time; eof marks
// the sender's clean end, err a failure.
type chunk struct {
	data []byte
	at   time.Time
	eof  bool
	err  bool
}

// line is one direction of a connection: what was read, in order, each
// piece due delay after it was read (and not before notBefore).
type line struct {
	delay     time.Duration
	notBefore time.Time
	mu        sync.Mutex
	queue     []chunk
	queued    int
	ready     *sync.Cond // signalled on a new chunk, or room, or stop
	stopped   bool
}

func newLine(delay time.Duration, notBefore time.Time) *line {
	l := &line{delay: delay, notBefore: notBefore}
	l.ready = sync.NewCond(&l.mu)
	return l
}

// read reads src into the line until it ends.
func (l *line) read(src *net.TCPConn) {
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		at := time.Now().Add(l.delay)
		if at.Before(l.notBefore) {
			at = l.notBefore
		}
		if n > 0 && !l.push(chunk{data: append([]byte(nil), buf[:n]...), at: at}) {
			return
		}
		if err != nil {
			l.push(chunk{at: at, eof: errors.Is(err, io.EOF), err: !errors.Is(err, io.EOF)})
			return
		}
	}
}

// push queues c, waiting while the line is full; false once stopped.
func (l *line) push(c chunk) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.queued >= maxQueued && !l.stopped {
		l.ready.Wait()
	}
	if l.stopped {
		return false
	}
	l.queue = append(l.queue, c)
	l.queued += len(c.data)
	l.ready.Broadcast()
	return true
}

// write delivers the line to dst, each chunk at its time, until its end:
// true for a clean end (dst half-closed), false for a failure.
func (l *line) write(dst *net.TCPConn) bool {
	for {
		l.mu.Lock()
		for len(l.queue) == 0 && !l.stopped {
			l.ready.Wait()
		}
		if l.stopped {
			l.mu.Unlock()
			return false
		}
		c := l.queue[0]
		l.queue = l.queue[1:]
		l.queued -= len(c.data)
		l.ready.Broadcast()
		l.mu.Unlock()
		if d := time.Until(c.at); d > 0 {
			time.Sleep(d)
		}
		switch {
		case c.err:
			return false
		case c.eof:
			_ = dst.CloseWrite()
			return true
		}
		if _, err := dst.Write(c.data); err != nil {
			return false
		}
	}
}

// stop ends the line: its reader and writer return.
func (l *line) stop() {
	l.mu.Lock()
	l.stopped = true
	l.ready.Broadcast()
	l.mu.Unlock()
}
