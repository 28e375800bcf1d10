package faultproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/spipe-dev/spipe/internal/tcprelay"
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
	*tcprelay.Server
	target string
	faults func(conn int) []Fault

	mu       sync.Mutex
	accepted int
	applied  []Applied
}

// Start listens on a loopback port and proxies each accepted connection to
// target. faults is called once per connection with its number (0 for the
// first accepted) and returns the faults for it; nil means none at all.
// Close stops accepting, resets every open connection and waits for the
// relays to end.
func Start(target string, faults func(conn int) []Fault) (*Proxy, error) {
	p := &Proxy{target: target, faults: faults}
	srv, err := tcprelay.Serve("127.0.0.1:0", func(srv *tcprelay.Server, id int, c *net.TCPConn) {
		p.mu.Lock()
		p.accepted++
		p.mu.Unlock()
		var fs []Fault
		if p.faults != nil {
			fs = p.faults(id)
		}
		p.handle(srv, id, c, fs)
	})
	if err != nil {
		return nil, err
	}
	p.Server = srv
	return p, nil
}

// Accepted is how many connections the proxy has accepted.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// Applied returns the faults that have fired so far, in order.
func (p *Proxy) Applied() []Applied {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Applied(nil), p.applied...)
}

func (p *Proxy) fired(id int, f Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.applied = append(p.applied, Applied{Conn: id, Fault: f})
}

// handle relays one connection; a failed dial resets the client.
func (p *Proxy) handle(srv *tcprelay.Server, id int, client net.Conn, faults []Fault) {
	server, err := net.DialTimeout("tcp", p.target, 10*time.Second)
	if err != nil {
		tcprelay.Reset(client)
		return
	}
	defer srv.Track(server)()
	// Either direction may reset both; the relays then end on their own.
	var once sync.Once
	killBoth := func() { once.Do(func() { tcprelay.Reset(client); tcprelay.Reset(server) }) }
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
