package spipe

import (
	"io"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/spipe/frame"
)

// dir is a direction through the tampering proxy.
type dir int

const (
	c2s dir = iota // client to server
	s2c            // server to client
)

// hook sees each protocol unit crossing the proxy — handshake messages,
// then frames — with its index in its direction, and returns what to send
// instead. cut closes the receiving side after sending out.
type hook func(d dir, i int, unit []byte) (out [][]byte, cut bool)

// passThrough forwards everything unchanged.
func passThrough(dir, int, []byte) ([][]byte, bool) { return nil, false }

// proxyPair connects a client and a server through a proxy that parses the
// stream into units and lets h rewrite them. It returns the unstarted ends.
func proxyPair(t testing.TB, ccfg, scfg *Config, h hook) (*Conn, *Conn) {
	t.Helper()
	cliRaw, proxyC := net.Pipe()
	proxyS, srvRaw := net.Pipe()
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait) // cleanups run last-in first-out: after the closes
	t.Cleanup(func() {
		for _, c := range []net.Conn{cliRaw, proxyC, proxyS, srvRaw} {
			c.Close()
		}
	})
	wg.Add(2)
	go func() { defer wg.Done(); relay(c2s, proxyC, proxyS, h) }()
	go func() { defer wg.Done(); relay(s2c, proxyS, proxyC, h) }()
	return Client(cliRaw, ccfg), Server(srvRaw, scfg)
}

// payloadPair is a handshaken proxyPair that records the payload size of
// every frame the client sends; payloads returns them so far.
func payloadPair(t testing.TB, ccfg, scfg *Config) (cli, srv *Conn, payloads func() []int) {
	t.Helper()
	var mu sync.Mutex
	var sizes []int
	cli, srv = proxyPair(t, ccfg, scfg, func(d dir, i int, u []byte) ([][]byte, bool) {
		if d == c2s && i >= frameUnit(0) {
			mu.Lock()
			sizes = append(sizes, len(u)-frame.Overhead)
			mu.Unlock()
		}
		return nil, false
	})
	cerr, serr := runHandshakes(t, cli, srv)
	require.NoError(t, cerr)
	require.NoError(t, serr)
	return cli, srv, func() []int {
		mu.Lock()
		defer mu.Unlock()
		return append([]int(nil), sizes...)
	}
}

// relay copies units from src to dst through h. When src ends, or h cuts,
// dst is closed; src is then drained so its writer never blocks.
func relay(d dir, src, dst net.Conn, h hook) {
	defer func() {
		dst.Close()
		io.Copy(io.Discard, src)
	}()
	sizes := []int{helloSize, finishedLen} // handshake units, c2s
	if d == s2c {
		sizes = sizes[:1]
	}
	for i := 0; ; i++ {
		var unit []byte
		if i < len(sizes) {
			unit = make([]byte, sizes[i])
			if _, err := io.ReadFull(src, unit); err != nil {
				return
			}
		} else {
			header := make([]byte, frame.HeaderSize)
			if _, err := io.ReadFull(src, header); err != nil {
				return
			}
			size, err := frame.Size(header)
			if err != nil {
				return
			}
			unit = append(header, make([]byte, size-frame.HeaderSize)...)
			if _, err := io.ReadFull(src, unit[frame.HeaderSize:]); err != nil {
				return
			}
		}
		out, cut := h(d, i, unit)
		if out == nil && !cut {
			out = [][]byte{unit}
		}
		for _, b := range out {
			if _, err := dst.Write(b); err != nil {
				return
			}
		}
		if cut {
			return
		}
	}
}

// onUnit returns a hook that applies f to unit i of direction d only.
func onUnit(d dir, i int, f func(unit []byte) ([][]byte, bool)) hook {
	return func(dd dir, ii int, unit []byte) ([][]byte, bool) {
		if dd == d && ii == i {
			return f(unit)
		}
		return nil, false
	}
}

// flipBit returns a unit rewrite flipping one bit.
func flipBit(bit int) func([]byte) ([][]byte, bool) {
	return func(unit []byte) ([][]byte, bool) {
		u := append([]byte(nil), unit...)
		u[bit/8] ^= 1 << (bit % 8)
		return [][]byte{u}, false
	}
}

// recorder records every unit in each direction.
type recorder struct {
	mu    sync.Mutex
	units [2][][]byte
}

func (r *recorder) hook(d dir, i int, unit []byte) ([][]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.units[d] = append(r.units[d], append([]byte(nil), unit...))
	return nil, false
}

func (r *recorder) unit(d dir, i int) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.units[d][i]
}
