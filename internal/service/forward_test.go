package service_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/pires/go-proxyproto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/service"
	"github.com/spipe-dev/spipe/internal/tcprelay"
	"github.com/spipe-dev/spipe/internal/testutil/pipetest"
	"github.com/spipe-dev/spipe/pkg/aead"
)

func TestEchoRoundTrip(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	_, connect := pipetest.Pair(t, tg.Addr, key, nil)
	for _, n := range []int{0, 1, 100_000, 3 << 20} {
		msg := pipetest.RandomBytes(n)
		got := pipetest.RoundTrip(t, pipetest.Dial(t, connect.Addr), msg)
		assert.True(t, bytes.Equal(msg, got), "%d bytes: echo differs (got %d bytes)", n, len(got))
	}
}

func TestEchoOverUnixSockets(t *testing.T) {
	key := pipetest.KeyFile(t)
	dir := t.TempDir()
	tgSock := filepath.Join(dir, "target.sock")
	ln, err := net.Listen("unix", tgSock)
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c); c.(*net.UnixConn).CloseWrite() }()
		}
	}()
	lsock, csock := filepath.Join(dir, "listen.sock"), filepath.Join(dir, "connect.sock")
	pipetest.Start(t, service.Listen, lsock, tgSock, key, func(o *service.Options) { o.SocketMode = 0o600 })
	pipetest.Start(t, service.Connect, csock, lsock, key, func(o *service.Options) { o.SocketMode = 0o640 })
	for sock, mode := range map[string]os.FileMode{lsock: 0o600, csock: 0o640} {
		fi, err := os.Stat(sock)
		require.NoError(t, err)
		assert.Equal(t, mode, fi.Mode().Perm(), sock)
	}
	c, err := net.Dial("unix", csock)
	require.NoError(t, err)
	defer c.Close()
	msg := pipetest.RandomBytes(200_000)
	go func() { c.Write(msg); c.(*net.UnixConn).CloseWrite() }()
	got, err := io.ReadAll(c)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(msg, got))
}

// stdio starts a connect without -s, its connection on stdin/stdout as
// ssh runs a ProxyCommand, with stdin as the client's bytes.
func stdio(t *testing.T, target, key string, stdin io.Reader, stdout io.Writer) *pipetest.Service {
	t.Helper()
	return pipetest.Start(t, service.Connect, "", target, key, func(o *service.Options) {
		o.Stdin = io.NopCloser(stdin)
		o.Stdout = nopWriteCloser{stdout}
	})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// TestStdio runs connect as ssh would run a ProxyCommand: the connection
// is stdin and stdout, and Run returns when it ends.
func TestStdio(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, nil)
	msg := pipetest.RandomBytes(1 << 20)
	var out bytes.Buffer
	c := stdio(t, listen.Addr, key, bytes.NewReader(msg), &out) // EOF on stdin is the client's half-close
	require.NoError(t, c.Wait(t, 30*time.Second))
	assert.True(t, bytes.Equal(msg, out.Bytes()), "stdout differs from stdin (%d of %d bytes)", out.Len(), len(msg))
}

// TestStdioFailure: a stdio connection with the wrong key makes Run fail
// (the command exits non-zero on it) without the target being dialled.
func TestStdioFailure(t *testing.T) {
	key, other := pipetest.KeyFile(t), pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, nil)
	c := stdio(t, listen.Addr, other, bytes.NewReader([]byte("hello")), io.Discard)
	err := c.Wait(t, 30*time.Second)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "handshake")
	listen.Log.Wait(t, `stage=handshake reason=auth`, nil)
	assert.Equal(t, int32(0), tg.Accepts.Load(), "target dialled for a client with the wrong key")
}

// TestHalfClose checks both directions of half-close: the target only
// answers after the client's EOF reached it, and the client only sees
// EOF after the target half-closed.
func TestHalfClose(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := pipetest.NewTarget(t, func(c net.Conn) {
		h := sha256.New()
		n, _ := io.Copy(h, c) // ends only on the client's forwarded EOF
		c.Write([]byte("got " + strconv.FormatInt(n, 10) + " bytes, sha256 "))
		c.Write([]byte(hex.EncodeToString(h.Sum(nil))))
		c.(*net.TCPConn).CloseWrite()
		// Still open for reading: the client must see EOF from our
		// CloseWrite, not from a full close.
		io.Copy(io.Discard, c)
	})
	_, connect := pipetest.Pair(t, tg.Addr, key, nil)
	msg := pipetest.RandomBytes(777_777)
	sum := sha256.Sum256(msg)
	got := pipetest.RoundTrip(t, pipetest.Dial(t, connect.Addr), msg)
	assert.Equal(t, "got 777777 bytes, sha256 "+hex.EncodeToString(sum[:]), string(got))
}

func TestWrongKeyNeverReachesTarget(t *testing.T) {
	key, other := pipetest.KeyFile(t), pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, nil)
	connect := pipetest.Start(t, service.Connect, "127.0.0.1:0", listen.Addr, other, nil)
	// The pipe just closes: EOF, or a reset so quick that even the dial
	// may see it.
	assert.Error(t, pipetest.TryEcho(connect.Addr, "probe"))
	listen.Log.Wait(t, `level=WARN msg="connection failed" peer=127\.0\.0\.1:\d+ stage=handshake reason=auth`, nil)
	assert.Equal(t, int32(0), tg.Accepts.Load(), "target dialled before the client proved the key")
}

// TestTargetRefused, plain and multiplexed: a target that refuses is one log line for that
// connection; the client is reset, not handed a clean empty answer; and
// the target is dialled afresh for the next connection.
func TestTargetRefused(t *testing.T) {
	for _, muxed := range []bool{false, true} {
		key := pipetest.KeyFile(t)
		down := pipetest.FreeAddr(t)
		listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", down, key, nil)
		connect := pipetest.Start(t, service.Connect, "127.0.0.1:0", listen.Addr, key, func(o *service.Options) { o.Mux = muxed })
		connect.Log.Wait(t, "msg=serving", nil)

		// The reset may come so quickly that the dial itself reports it.
		c, err := net.DialTimeout("tcp", connect.Addr, 5*time.Second)
		if err == nil {
			require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
			_, err = io.ReadAll(c)
			c.Close()
		}
		assert.ErrorIs(t, err, syscall.ECONNRESET, "mux=%v", muxed)
		listen.Log.Wait(t, `level=WARN msg="connection failed" peer=127\.0\.0\.1:\d+ stage=dial reason=refused`, nil)

		ln, err := net.Listen("tcp", down)
		require.NoError(t, err)
		go func() {
			c, err := ln.Accept()
			if err == nil {
				io.Copy(c, c)
				c.Close()
			}
		}()
		assert.NoError(t, pipetest.TryEcho(connect.Addr, "back up"), "mux=%v", muxed)
		ln.Close()
		if muxed {
			assert.Equal(t, 1, connect.Log.Count(`msg="carrier open"`), "a refused target does not cost the carrier")
		}
	}
}

// TestProtocolOptions runs the pipe with non-default protocol options on
// both sides, and checks a forward-secrecy mismatch is refused.
func TestProtocolOptions(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	_, connect := pipetest.Pair(t, tg.Addr, key, func(o *service.Options) {
		o.Suites = []aead.Suite{aead.XSalsa20Poly1305, aead.ChaCha20Poly1305}
		o.DisableForwardSecrecy = true
		o.PadTo = 1024
	})
	msg := pipetest.RandomBytes(300_001)
	assert.True(t, bytes.Equal(msg, pipetest.RoundTrip(t, pipetest.Dial(t, connect.Addr), msg)))

	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, func(o *service.Options) { o.RequireForwardSecrecy = true })
	noPFS := pipetest.Start(t, service.Connect, "127.0.0.1:0", listen.Addr, key, func(o *service.Options) { o.DisableForwardSecrecy = true })
	assert.Error(t, pipetest.TryEcho(noPFS.Addr, "no pfs"))
	listen.Log.Wait(t, `stage=handshake reason=pfs_required`, nil)
}

// TestBindSource: BindSource (-b) sets the source address of connections
// to the target.
func TestBindSource(t *testing.T) {
	key := pipetest.KeyFile(t)
	from := make(chan string, 1)
	tg := pipetest.NewTarget(t, func(c net.Conn) {
		from <- c.RemoteAddr().(*net.TCPAddr).IP.String()
		io.Copy(c, c)
		c.(*net.TCPConn).CloseWrite()
	})
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, func(o *service.Options) {
		o.BindSource = &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}
	})
	connect := pipetest.Start(t, service.Connect, "127.0.0.1:0", listen.Addr, key, nil)
	assert.NoError(t, pipetest.TryEcho(connect.Addr, "bound"))
	assert.Equal(t, "127.0.0.2", <-from)
}

// TestProxyProtocol: with ProxyProtocol the target first receives a PROXY
// v2 header naming the address the encrypted connection came from.
func TestProxyProtocol(t *testing.T) {
	key := pipetest.KeyFile(t)
	headers := make(chan *proxyproto.Header, 1)
	tg := pipetest.NewTarget(t, func(c net.Conn) {
		r := bufio.NewReader(c)
		h, err := proxyproto.Read(r)
		if err != nil {
			headers <- nil
			return
		}
		headers <- h
		io.Copy(c, r)
		c.(*net.TCPConn).CloseWrite()
	})
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, func(o *service.Options) { o.ProxyProtocol = true })
	connect := pipetest.Start(t, service.Connect, "127.0.0.1:0", listen.Addr, key, nil)
	assert.Equal(t, []byte("through"), pipetest.RoundTrip(t, pipetest.Dial(t, connect.Addr), []byte("through")))
	h := <-headers
	require.NotNil(t, h, "no valid PROXY header")
	assert.Equal(t, byte(2), h.Version)
	assert.Equal(t, proxyproto.PROXY, h.Command)
	assert.Equal(t, proxyproto.TCPv4, h.TransportProtocol)
	src, dst, ok := h.TCPAddrs()
	require.True(t, ok)
	assert.Equal(t, listen.Addr, dst.String(), "destination is the address spipe listen accepted on")
	// The source is connect's outgoing socket: it is not logged, but it is
	// a loopback address with a real port.
	assert.True(t, src.IP.IsLoopback())
	assert.NotZero(t, src.Port)
}

// sendProxyV2 is a load balancer as HAProxy's send-proxy-v2 makes one:
// it relays each connection to backend from 127.0.0.3, after a PROXY v2
// header naming the client's address and the one it reached.
func sendProxyV2(t *testing.T, backend string) string {
	t.Helper()
	lb, err := tcprelay.Serve("127.0.0.1:0", func(s *tcprelay.Server, _ int, c *net.TCPConn) {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 3)}}
		b, err := d.Dial("tcp", backend)
		if err != nil {
			return
		}
		defer s.Track(b)()
		defer b.Close()
		if _, err := proxyproto.HeaderProxyFromAddrs(2, c.RemoteAddr(), c.LocalAddr()).WriteTo(b); err != nil {
			return
		}
		go func() { io.Copy(b, c); b.(*net.TCPConn).CloseWrite() }()
		io.Copy(c, b)
		c.CloseWrite()
	})
	require.NoError(t, err)
	t.Cleanup(func() { lb.Close() })
	return lb.Addr()
}

// TestAcceptProxyFrom: behind a balancer that sends PROXY headers, with
// its address trusted, the listener names the client (here connect's
// outgoing address, 127.0.0.2) in its access log and in its own PROXY
// header to the target; the balancer's address, 127.0.0.3, appears
// nowhere but in the debug line of the header.
func TestAcceptProxyFrom(t *testing.T) {
	key := pipetest.KeyFile(t)
	sources := make(chan string, 1)
	tg := pipetest.NewTarget(t, func(c net.Conn) {
		r := bufio.NewReader(c)
		h, err := proxyproto.Read(r)
		if err != nil {
			sources <- "no PROXY header: " + err.Error()
			return
		}
		sources <- h.SourceAddr.String()
		io.Copy(c, r)
		c.(*net.TCPConn).CloseWrite()
	})
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, func(o *service.Options) {
		o.AcceptProxyFrom = []netip.Prefix{netip.MustParsePrefix("127.0.0.3/32")}
		o.ProxyProtocol, o.AccessLog = true, true
	})
	connect := pipetest.Start(t, service.Connect, "127.0.0.1:0", sendProxyV2(t, listen.Addr), key, func(o *service.Options) {
		o.BindSource = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}
	})
	assert.Equal(t, []byte("via a balancer"), pipetest.RoundTrip(t, pipetest.Dial(t, connect.Addr), []byte("via a balancer")))
	src := <-sources
	assert.Regexp(t, `^127\.0\.0\.2:\d+$`, src)
	listen.Log.Wait(t, `level=INFO msg="connection closed" peer=`+regexp.QuoteMeta(src)+` key=`, nil)
	listen.Log.Wait(t, `msg=serving .*accept_proxy_from=\[127\.0\.0\.3/32\]`, nil)
	assert.Equal(t, 1, listen.Log.Count("127.0.0.3:"), "only the header's debug line names the balancer:\n%s", listen.Log.String())

	// A client straight to the listener, from an address it does not
	// trust, is served without a header.
	direct := pipetest.Start(t, service.Connect, "127.0.0.1:0", listen.Addr, key, nil)
	assert.Equal(t, []byte("direct"), pipetest.RoundTrip(t, pipetest.Dial(t, direct.Addr), []byte("direct")))
	assert.Regexp(t, `^127\.0\.0\.1:\d+$`, <-sources)
}

// TestUnixSocketLifecycle: a socket left by a process that died is
// replaced, one still in use is "address in use", and a clean stop
// removes it.
func TestUnixSocketLifecycle(t *testing.T) {
	key := pipetest.KeyFile(t)
	sock := filepath.Join(t.TempDir(), "s.sock")
	tg := pipetest.EchoTarget(t)
	first := pipetest.Start(t, service.Listen, sock, tg.Addr, key, nil)

	_, err := pipetest.StartOptions(t, pipetest.Options(t, service.Listen, sock, tg.Addr, key))
	require.Error(t, err)
	assert.Equal(t, "listen on "+sock+": address already in use", err.Error())
	first.Stop(t)
	assert.NoFileExists(t, sock)

	// What a killed process leaves: the socket file, nobody accepting.
	dead, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	require.NoError(t, err)
	dead.SetUnlinkOnClose(false)
	dead.Close()
	require.FileExists(t, sock)
	second := pipetest.Start(t, service.Listen, sock, tg.Addr, key, nil)
	assert.Equal(t, sock, second.Addr)
	second.Stop(t)
	assert.NoFileExists(t, sock)
}
