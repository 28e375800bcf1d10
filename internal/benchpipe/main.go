// Command benchpipe is the load generator, target and plaintext relay of
// "make bench-pipe" (scripts/bench-pipe.sh). It is a measuring tool, not
// part of spipe.
//
//	benchpipe target -l ADDR              the far end: a sink for bulk, an echo for the rest
//	benchpipe relay  -l ADDR -t ADDR      spipe's forwarding engine, encryption off
//	benchpipe bulk   -c ADDR -n BYTES     one connection into the sink: MB/s
//	benchpipe rtt    -c ADDR -n N -size B ping-pongs on one connection: p50, p99
//	benchpipe cps    -c ADDR -n N -p P    connect, 1-byte echo, close: conns/s
//	benchpipe ttfb   -c ADDR -n N         N connections one by one: connect to first echoed byte
//	benchpipe fair   -c ADDR -n N -size B round trips beside a bulk connection: p50 idle, loaded
//	benchpipe delay  -l ADDR -t ADDR -d D a proxy adding D each way (internal/delayproxy)
//	benchpipe restart -spipe BIN -t ADDR -n N -gap D   listener restarts under connect --mux: ms to serve
//	benchpipe silent -l ADDR              a target that never reads
//	benchpipe smallframes -c ADDR -k FILE -pid PID -streams N -n FRAMES   1-byte frames: listener RSS
//	benchpipe wait   -c ADDR              wait until ADDR accepts
//	benchpipe port                        print a free loopback TCP port
//
// Measurements print one line of key=value pairs for the script to parse.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spipe-dev/spipe/internal/engine"
)

func main() {
	if len(os.Args) < 2 {
		fatal(errors.New("usage: benchpipe target|relay|bulk|rtt|cps|ttfb|fair|delay|restart|silent|smallframes|wait|port [flags]"))
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	listen := fs.String("l", "127.0.0.1:0", "address to listen on")
	target := fs.String("t", "", "address to forward to (relay)")
	copyBuf := fs.Int("buf", 0, "relay: copy buffer in bytes (0: the engine's 64 KiB)")
	connect := fs.String("c", "", "address to connect to")
	n := fs.Int64("n", 0, "bytes (bulk), round trips (rtt) or connections (cps)")
	size := fs.Int("size", 64, "message size (rtt)")
	par := fs.Int("p", 1, "concurrent clients (cps)")
	oneWay := fs.Duration("d", 25*time.Millisecond, "one-way delay (delay)")
	bin := fs.String("spipe", "spipe", "the spipe binary (restart)")
	gap := fs.Duration("gap", 300*time.Millisecond, "from SIGTERM to the new listener's start (restart)")
	keyFile := fs.String("k", "", "key file (smallframes)")
	pid := fs.Int("pid", 0, "the listener's process id (smallframes)")
	streams := fs.Int("streams", 100, "streams to open (smallframes)")
	_ = fs.Parse(os.Args[2:])

	var err error
	switch os.Args[1] {
	case "target":
		err = serve(*listen, farEnd)
	case "port":
		err = freePort()
	case "relay":
		err = relay(*listen, *target, *copyBuf)
	case "bulk":
		err = bulk(*connect, *n)
	case "rtt":
		err = rtt(*connect, int(*n), *size)
	case "cps":
		err = cps(*connect, int(*n), *par)
	case "ttfb":
		err = ttfb(*connect, int(*n))
	case "fair":
		err = fair(*connect, int(*n), *size)
	case "delay":
		err = delay(*listen, *target, *oneWay)
	case "restart":
		err = restart(*bin, *target, int(*n), *gap)
	case "silent":
		err = silent(*listen)
	case "smallframes":
		err = smallFrames(*connect, *keyFile, *pid, *streams, int(*n))
	case "wait":
		err = wait(*connect)
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "benchpipe:", err)
	os.Exit(1)
}

// serve accepts on addr until SIGTERM/SIGINT, handling each connection
// with h. It prints the address once listening.
func serve(addr string, h func(*net.TCPConn)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	context.AfterFunc(ctx, func() { ln.Close() })
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		go func() {
			defer c.Close()
			h(c.(*net.TCPConn))
		}()
	}
}

// sinkMark is the first byte of a bulk stream: it makes the far end a
// sink. Any other first byte is echoed with the rest.
const sinkMark = 'S'

// farEnd is a sink or an echo server, as the first byte says, so each
// system under test needs one chain of relays only.
func farEnd(c *net.TCPConn) {
	var first [1]byte
	if _, err := io.ReadFull(c, first[:]); err != nil {
		return
	}
	if first[0] == sinkMark {
		sink(c)
		return
	}
	if _, err := c.Write(first[:]); err != nil {
		return
	}
	echo(c)
}

// freePort prints a loopback port nothing listens on (at that moment).
func freePort() error {
	p, err := pickPort()
	if err != nil {
		return err
	}
	fmt.Println(p)
	return nil
}

// sink reads to EOF and answers with the count, big-endian, so the sender
// knows when everything has arrived.
func sink(c *net.TCPConn) {
	n, err := io.CopyBuffer(io.Discard, c, make([]byte, 256<<10))
	if err != nil {
		return
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	_, _ = c.Write(b[:])
	_ = c.CloseWrite()
}

func echo(c *net.TCPConn) {
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			_ = c.CloseWrite()
			return
		}
	}
}

// relay runs spipe's forwarding engine with the handshake replaced by
// nothing: the same accept, dial, copy loop and buffers, no encryption.
// Two of them in a row are the "plaintext relay pair" spipe is compared
// with. copyBuf sets the engine's buffer for a copy between two plaintext
// connections (0: its default, 64 KiB); 1 MiB moves data in pieces as
// large as spipe's frames.
func relay(listen, target string, copyBuf int) error {
	ln, err := engine.Listen(context.Background(), engine.Addr{Network: "tcp", Address: listen}, engine.ListenOptions{})
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr())
	td := &engine.TargetDialer{Target: engine.Addr{Network: "tcp", Address: target}}
	f := &engine.Forwarder{
		SecureSide: engine.SecureInbound,
		Secure:     func(_ context.Context, c net.Conn) (engine.Conn, error) { return c.(engine.Conn), nil },
		Dial:       td.Dial,
		MaxConns:   1000,

		PlainCopyBuffer: copyBuf,
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return f.Serve(ctx, ln)
}

func dial(addr string) (*net.TCPConn, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return c.(*net.TCPConn), nil
}

// bulk sends n bytes over one connection and waits for the sink's count.
func bulk(addr string, n int64) error {
	c, err := dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	buf := make([]byte, 256<<10)
	for i := range buf {
		buf[i] = byte(i * 7) // not all zeros, in case anything compresses
	}
	start := time.Now()
	if _, err := c.Write([]byte{sinkMark}); err != nil {
		return err
	}
	for left := n; left > 0; {
		m, err := c.Write(buf[:min(left, int64(len(buf)))])
		if err != nil {
			return err
		}
		left -= int64(m)
	}
	if err := c.CloseWrite(); err != nil {
		return err
	}
	var b [8]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		return fmt.Errorf("waiting for the sink: %w", err)
	}
	d := time.Since(start)
	if got := int64(binary.BigEndian.Uint64(b[:])); got != n {
		return fmt.Errorf("sink received %d of %d bytes", got, n)
	}
	fmt.Printf("bytes=%d seconds=%.4f mbps=%.1f\n", n, d.Seconds(), float64(n)/d.Seconds()/1e6)
	return nil
}

// rtt times n round trips of size bytes on one connection, after a
// warm-up. The messages are zeros, never the sink's mark.
func rtt(addr string, n, size int) error {
	c, err := dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	msg, back := make([]byte, size), make([]byte, size)
	if _, err := roundTrips(c, msg, back, warmUp); err != nil {
		return err
	}
	times, err := roundTrips(c, msg, back, n)
	if err != nil {
		return err
	}
	fmt.Printf("n=%d p50_us=%.1f p99_us=%.1f\n", n, us(percentile(times, 50)), us(percentile(times, 99)))
	return nil
}

// cps opens n connections, p at a time: connect, 1-byte echo, close.
func cps(addr string, n, p int) error {
	var next atomic.Int64
	var failed atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for range p {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := []byte{42}
			for next.Add(1) <= int64(n) {
				if err := oneEcho(addr, b); err != nil {
					failed.Add(1)
					once.Do(func() { firstErr = err })
				}
			}
		}()
	}
	wg.Wait()
	d := time.Since(start)
	if f := failed.Load(); f > 0 {
		return fmt.Errorf("%d of %d connections failed, first: %w", f, n, firstErr)
	}
	fmt.Printf("n=%d seconds=%.4f cps=%.1f\n", n, d.Seconds(), float64(n)/d.Seconds())
	return nil
}

func oneEcho(addr string, b []byte) error {
	c, err := dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write(b); err != nil {
		return err
	}
	var r [1]byte
	if _, err := io.ReadFull(c, r[:]); err != nil {
		return err
	}
	return nil
}

// wait returns once addr accepts connections (up to 30 s).
func wait(addr string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
