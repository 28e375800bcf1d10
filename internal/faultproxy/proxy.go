package faultproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/spipe-dev/spipe/pkg/spipe/frame"
)

// Handshake message sizes from docs/PROTOCOL.md section 2 (pkg/spipe keeps
// its own unexported).
const (
	helloSize    = 107 // docs/PROTOCOL.md 2.1; the handshake tests below fail if it is wrong
	finishedSize = 34
)

// Applied records a fault that fired: the proxy connection it hit
// (numbered from 0 in accept order) and the fault.
type Applied struct {
	Conn  int
	Fault Fault
}

// Proxy accepts TCP connections, dials Target for each and relays both
// directions unit by unit, applying the faults Faults picks for that
// connection.
type Proxy struct {
	target string
	faults func(conn int) []Fault
	ln     net.Listener

	mu      sync.Mutex
	n       int
	applied []Applied
	conns   map[net.Conn]struct{}
	wg      sync.WaitGroup
}

// Start listens on a loopback port and proxies each accepted connection to
// target. faults is called once per connection with its number (0 for the
// first accepted) and returns the faults for it; nil means none at all.
func Start(target string, faults func(conn int) []Fault) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{target: target, faults: faults, ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr is the address clients connect to.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Accepted is how many connections the proxy has accepted.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

// Applied returns the faults that have fired so far, in order.
func (p *Proxy) Applied() []Applied {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Applied(nil), p.applied...)
}

// Close stops accepting, resets every open connection and waits for the
// relays to end.
func (p *Proxy) Close() error {
	err := p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		reset(c)
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		id := p.n
		p.n++
		p.mu.Unlock()
		var faults []Fault
		if p.faults != nil {
			faults = p.faults(id)
		}
		p.wg.Add(1)
		go p.handle(id, c, faults)
	}
}

// track adds c to (or removes it from) the connections Close resets.
func (p *Proxy) track(c net.Conn, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
}

func (p *Proxy) fired(id int, f Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.applied = append(p.applied, Applied{Conn: id, Fault: f})
}

// handle relays one connection; a failed dial resets the client.
func (p *Proxy) handle(id int, client net.Conn, faults []Fault) {
	defer p.wg.Done()
	p.track(client, true)
	defer p.track(client, false)
	server, err := net.DialTimeout("tcp", p.target, 10*time.Second)
	if err != nil {
		reset(client)
		return
	}
	p.track(server, true)
	defer p.track(server, false)
	// Either direction may reset both; the relays then end on their own.
	var once sync.Once
	killBoth := func() { once.Do(func() { reset(client); reset(server) }) }
	done := make(chan struct{})
	go func() {
		p.relay(id, ClientToServer, client, server, faults, killBoth)
		close(done)
	}()
	p.relay(id, ServerToClient, server, client, faults, killBoth)
	<-done
	client.Close()
	server.Close()
}

// relay copies src to dst unit by unit. A clean end of src becomes a FIN
// on dst (half-close), so the stream's own ending is what the receiver
// judges; a failed src resets both.
func (p *Proxy) relay(id int, d Direction, src, dst net.Conn, faults []Fault, killBoth func()) {
	r := bufio.NewReaderSize(src, 64<<10)
	handshake := []int{helloSize, finishedSize}
	if d == ServerToClient {
		handshake = handshake[:1]
	}
	var held []byte // a unit Reorder holds back
	send := func(b []byte) bool {
		_, err := dst.Write(b)
		return err == nil
	}
	var buf []byte
	for i := 0; ; i++ {
		hs := i < len(handshake)
		index := i
		if !hs {
			index = i - len(handshake)
		}
		unit, raw, err := readUnit(r, buf, hs, handshake, i)
		buf = unit[:0]
		if raw {
			// The header announced more than any spipe peer may send: the
			// peer rejects it, so just pass the bytes on from here.
			if !send(unit) {
				killBoth()
				return
			}
			if _, err := io.Copy(dst, r); err != nil {
				killBoth()
				return
			}
			closeWrite(dst)
			return
		}
		if err != nil {
			if len(unit) > 0 {
				send(unit) // a partial unit before EOF goes on as it came
			}
			if held != nil {
				send(held)
			}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				closeWrite(dst)
			} else {
				killBoth()
			}
			return
		}
		out := [][]byte{unit}
		var f *Fault
		for k := range faults {
			if faults[k].matches(d, hs, index) {
				f = &faults[k]
				break
			}
		}
		if f != nil {
			p.fired(id, *f)
			switch f.Kind {
			case FlipBit:
				bit := f.Bit % (8 * len(unit))
				if bit < 0 {
					bit += 8 * len(unit)
				}
				unit[bit/8] ^= 1 << (bit % 8)
			case Drop:
				out = nil
			case Duplicate:
				out = [][]byte{unit, unit}
			case Reorder:
				held = append([]byte(nil), unit...)
				out = nil
			case Delay:
				time.Sleep(f.Delay)
			case Truncate:
				keep := f.Keep % len(unit)
				if keep < 0 {
					keep += len(unit)
				}
				send(unit[:keep])
				closeWrite(dst)
				_, _ = io.Copy(io.Discard, r)
				return
			case Reset:
				killBoth()
				return
			}
		} else if held != nil {
			out = append(out, held)
			held = nil
		}
		for _, b := range out {
			if !send(b) {
				killBoth()
				return
			}
		}
	}
}

// readUnit reads handshake message i, or one frame, into buf's storage.
// raw reports a frame header announcing more than frame.MaxPayload;
// unit then holds just that header.
func readUnit(r *bufio.Reader, buf []byte, hs bool, handshake []int, i int) (unit []byte, raw bool, err error) {
	if hs {
		unit = grow(buf, handshake[i])
		n, err := io.ReadFull(r, unit)
		return unit[:n], false, err
	}
	unit = grow(buf, frame.HeaderSize)
	n, err := io.ReadFull(r, unit)
	if err != nil {
		return unit[:n], false, err
	}
	size, err := frame.Size(unit)
	if err != nil {
		return unit, true, nil
	}
	unit = grow(unit, size)
	n, err = io.ReadFull(r, unit[frame.HeaderSize:])
	return unit[:frame.HeaderSize+n], false, err
}

// grow returns a slice of length n sharing b's storage when it can, with
// b's contents kept.
func grow(b []byte, n int) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	nb := make([]byte, n, max(n, 2*cap(b)))
	copy(nb, b)
	return nb
}

func closeWrite(c net.Conn) {
	if hc, ok := c.(interface{ CloseWrite() error }); ok {
		_ = hc.CloseWrite()
		return
	}
	c.Close()
}

// reset closes c with an RST rather than a FIN.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	c.Close()
}
