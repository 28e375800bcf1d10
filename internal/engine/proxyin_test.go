package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"regexp"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pires/go-proxyproto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/pkg/spipe"
)

// loopback is the balancers' network in these tests: every test client
// dials from 127.0.0.1 and is a trusted balancer.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// proxyTarget is an echo target behind a spipe listen that sends a PROXY
// header: it hands each header to headers, then echoes.
func proxyTarget(t *testing.T) (addr string, headers <-chan *proxyproto.Header) {
	t.Helper()
	ch := make(chan *proxyproto.Header, 16)
	addr = serveTCP(t, func(c net.Conn) {
		r := bufio.NewReader(c)
		h, err := proxyproto.Read(r)
		if err != nil {
			ch <- nil
			return
		}
		ch <- h
		io.Copy(c, r)
		c.(*net.TCPConn).CloseWrite()
	})
	return addr, ch
}

// behindBalancer serves a "spipe listen" that trusts PROXY headers from
// loopback and sends one to its target.
func behindBalancer(t *testing.T, cfg *spipe.Config, tweak func(*Forwarder)) (addr string, headers <-chan *proxyproto.Header, log *testutil.Log) {
	t.Helper()
	target, headers := proxyTarget(t)
	addr, log = spipeListen(t, target, cfg, func(f *Forwarder) {
		f.AcceptProxyFrom = loopback
		f.AccessLog = true
		f.Dial = (&TargetDialer{Target: Addr{Network: "tcp", Address: target}, ProxyHeader: true}).Dial
		f.FirstMessageSize = 107
		if tweak != nil {
			tweak(f)
		}
	})
	return addr, headers, log
}

// viaBalancer dials addr as a balancer would: the header first, then the
// client's spipe connection, whose echo of msg it checks.
func viaBalancer(t *testing.T, addr string, header []byte, cfg *spipe.Config, msg string) {
	t.Helper()
	raw, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer raw.Close()
	_, err = raw.Write(header)
	require.NoError(t, err)
	c := spipe.Client(raw, cfg)
	require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = c.Write([]byte(msg))
	require.NoError(t, err)
	require.NoError(t, c.CloseWrite())
	got, err := io.ReadAll(c)
	require.NoError(t, err)
	assert.Equal(t, msg, string(got))
}

func tcpAddr(s string) *net.TCPAddr { return net.TCPAddrFromAddrPort(netip.MustParseAddrPort(s)) }

// v2 formats a version 2 header from src to dst with tlvs.
func v2(t *testing.T, src, dst net.Addr, tlvs ...proxyproto.TLV) []byte {
	t.Helper()
	h := proxyproto.HeaderProxyFromAddrs(2, src, dst)
	require.NoError(t, h.SetTLVs(tlvs))
	b, err := h.Format()
	require.NoError(t, err)
	return b
}

// withCRC32C sets the CRC32C TLV (the header's last TLV, zero) of a
// version 2 header as the PROXY protocol specifies it.
func withCRC32C(b []byte) []byte {
	binary.BigEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// TestProxyHeaderNamesTheClient: a header from a trusted balancer names
// the client for the access log and for the target's own PROXY header;
// a header that names no client (LOCAL, UNKNOWN, a Unix socket) leaves the
// balancer's address in place. Version 1 and 2, IPv4 and IPv6, with TLVs
// spipe ignores and a CRC32C it checks.
func TestProxyHeaderNamesTheClient(t *testing.T) {
	cfg := testConfig(t)
	addr, headers, log := behindBalancer(t, cfg, nil)
	client4, front4 := tcpAddr("203.0.113.7:5555"), tcpAddr("192.0.2.80:8022")
	client6, front6 := tcpAddr("[2001:db8::7]:6666"), tcpAddr("[2001:db8::80]:8022")
	crc := withCRC32C(v2(t, client4, front4,
		proxyproto.TLV{Type: proxyproto.PP2_TYPE_ALPN, Value: []byte("spipe")},
		proxyproto.TLV{Type: proxyproto.PP2_TYPE_NOOP, Value: []byte{0, 0}},
		proxyproto.TLV{Type: proxyproto.PP2_TYPE_CRC32C, Value: make([]byte, 4)}))
	unix := &net.UnixAddr{Net: "unix", Name: "/run/client.sock"}
	for _, tc := range []struct {
		name      string
		header    []byte
		src, dst  string // what the target's header says; "" is the balancer's connection
		accessLog string
	}{
		{"v1 TCP4", []byte("PROXY TCP4 203.0.113.7 192.0.2.80 5555 8022\r\n"), "203.0.113.7:5555", "192.0.2.80:8022", `peer=203\.0\.113\.7:5555`},
		{"v1 TCP6", []byte("PROXY TCP6 2001:db8::7 2001:db8::80 6666 8022\r\n"), "[2001:db8::7]:6666", "[2001:db8::80]:8022", `peer=\[2001:db8::7\]:6666`},
		{"v2 TCPv4", v2(t, client4, front4), "203.0.113.7:5555", "192.0.2.80:8022", `peer=203\.0\.113\.7:5555`},
		{"v2 TCPv6", v2(t, client6, front6), "[2001:db8::7]:6666", "[2001:db8::80]:8022", `peer=\[2001:db8::7\]:6666`},
		{"v2 with TLVs and CRC32C", crc, "203.0.113.7:5555", "192.0.2.80:8022", `peer=203\.0\.113\.7:5555`},
		{"v2 LOCAL", v2(t, nil, nil), "", "", `peer=127\.0\.0\.1:\d+`},
		{"v1 UNKNOWN", []byte("PROXY UNKNOWN\r\n"), "", "", `peer=127\.0\.0\.1:\d+`},
		{"v2 Unix socket", v2(t, unix, unix), "", "", `peer=127\.0\.0\.1:\d+`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := log.Count(`msg="connection closed"`)
			viaBalancer(t, addr, tc.header, cfg, "through "+tc.name)
			h := <-headers
			require.NotNil(t, h, "the target got no PROXY header")
			src, dst, ok := h.TCPAddrs()
			require.True(t, ok)
			if tc.src != "" {
				assert.Equal(t, tc.src, src.String())
				assert.Equal(t, tc.dst, dst.String())
			} else {
				assert.Equal(t, "127.0.0.1", src.IP.String(), "the balancer's own connection")
				assert.Equal(t, addr, dst.String())
			}
			log.WaitCount(t, before+1, 10*time.Second, `msg="connection closed"`)
			lines := regexp.MustCompile(`level=INFO msg="connection closed" `+tc.accessLog+` key=`).FindAllString(log.String(), -1)
			assert.NotEmpty(t, lines, "access log: %s", log.String())
		})
	}
}

// TestProxyHeaderFailures: from a trusted address, a connection without a
// valid header in time is one warning, one failure counted as
// "proxy_header", and a closed connection; one that closes before its
// first byte (a bare TCP health check) is an end like any other. Nothing
// reaches the target.
func TestProxyHeaderFailures(t *testing.T) {
	cfg := testConfig(t)
	obs := newFailures()
	addr, headers, log := behindBalancer(t, cfg, func(f *Forwarder) {
		f.Observer = obs
		f.FirstMessageTimeout = 500 * time.Millisecond
	})
	badCRC := withCRC32C(v2(t, tcpAddr("203.0.113.7:5555"), tcpAddr("192.0.2.80:8022"),
		proxyproto.TLV{Type: proxyproto.PP2_TYPE_CRC32C, Value: make([]byte, 4)}))
	badCRC[len(badCRC)-1] ^= 1
	hello := bytes.Repeat([]byte{2}, 107) // a spipe client without a balancer's header
	udp := v2(t, &net.UDPAddr{IP: net.IPv4(203, 0, 113, 7), Port: 5555}, &net.UDPAddr{IP: net.IPv4(192, 0, 2, 80), Port: 53})
	for _, tc := range []struct {
		name, err string
		send      []byte
	}{
		{"missing", "missing, the connection does not begin with one (is the balancer told to send one?", hello},
		{"malformed v1", "malformed", []byte("PROXY TCP4 203.0.113.7 nonsense\r\n")},
		{"malformed v2", "malformed", append(append([]byte{}, proxyproto.SIGV2...), 0x2f, 0x11, 0, 12)},
		{"datagram", "names a datagram connection", udp},
		{"bad CRC32C", "CRC32C does not match", badCRC},
		{"slow", "not complete by the first-message deadline", proxyproto.SIGV2[:8]},
		{"silent", "none by the first-message deadline", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := obs.count(obs.handshake, "proxy_header")
			// Each case from a balancer of its own: lines are limited per address.
			ip := fmt.Sprintf("127.0.0.%d", 10+before)
			c := dialFrom(t, ip, addr)
			_, err := c.Write(tc.send)
			require.NoError(t, err)
			assert.True(t, cutWithin(c, 5*time.Second), "the connection was not closed")
			require.Eventually(t, func() bool { return obs.count(obs.handshake, "proxy_header") == before+1 },
				5*time.Second, 10*time.Millisecond)
			log.WaitCount(t, 1, 5*time.Second, "level=WARN", `msg="connection failed" peer=`+ip+":",
				"stage=handshake reason=proxy_header", tc.err)
		})
	}
	// A TCP health check: connect, close.
	c := dialFrom(t, "127.0.0.9", addr)
	c.Close()
	require.Eventually(t, func() bool { return obs.count(obs.handshake, "eof") == 1 }, 5*time.Second, 10*time.Millisecond)
	log.WaitCount(t, 1, 5*time.Second, "level=DEBUG", "stage=handshake reason=eof")
	assert.Empty(t, headers, "a connection without a valid header reached the target")
}

// TestProxyHeaderLinesRateLimited: failures from one balancer are counted
// in full, logged up to the per-address limit.
func TestProxyHeaderLinesRateLimited(t *testing.T) {
	cfg := testConfig(t)
	obs := newFailures()
	addr, _, log := behindBalancer(t, cfg, func(f *Forwarder) { f.Observer = obs })
	const n = 3 * failureLineBurst
	for range n {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		c.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
		io.Copy(io.Discard, c)
		c.Close()
	}
	require.Eventually(t, func() bool { return obs.count(obs.handshake, "proxy_header") == n }, 10*time.Second, 10*time.Millisecond)
	// A failure is counted before its line is written: wait for the lines
	// the limit lets through, then check that no more came.
	require.Eventually(t, func() bool { return log.Count("reason=proxy_header") >= failureLineBurst }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, failureLineBurst, log.Count("reason=proxy_header"), log.String())
}

// TestProxyHeaderOnlyFromTrustedAddresses: from an address outside
// AcceptProxyFrom a header is not read: it is the start of a handshake
// like any other bytes, which fails, logged with the connection's own
// address.
func TestProxyHeaderOnlyFromTrustedAddresses(t *testing.T) {
	cfg := testConfig(t)
	obs := newFailures()
	addr, headers, log := behindBalancer(t, cfg, func(f *Forwarder) {
		f.AcceptProxyFrom = []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("2001:db8::/32")}
		f.Observer = obs
	})
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write(v2(t, tcpAddr("203.0.113.7:5555"), tcpAddr("192.0.2.80:8022")))
	require.NoError(t, err)
	assert.True(t, cutWithin(c, 5*time.Second))
	log.Wait(t, `level=WARN msg="connection failed" peer=127\.0\.0\.1:\d+ stage=handshake reason=version`, nil)
	assert.Zero(t, obs.count(obs.handshake, "proxy_header"))
	assert.Empty(t, headers)
	assert.NotContains(t, log.String(), "203.0.113.7")
}

func TestTrustsProxy(t *testing.T) {
	f := &Forwarder{AcceptProxyFrom: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("2001:db8:1::/48")}}
	for addr, want := range map[string]bool{
		"10.1.2.3:4":           true,
		"[::ffff:10.1.2.3]:4":  true, // an IPv4 peer on a dual-stack socket
		"10.2.0.1:4":           false,
		"[2001:db8:1:5::9]:4":  true,
		"[2001:db8:2::9]:4":    false,
		"[fe80::1%eth0]:4":     false,
		"[::ffff:10.2.0.1]:40": false,
	} {
		assert.Equal(t, want, f.trustsProxy(fakeFrom(net.TCPAddrFromAddrPort(netip.MustParseAddrPort(addr)))), addr)
	}
	assert.False(t, f.trustsProxy(fakeFrom(&net.UnixAddr{Net: "unix", Name: "@"})), "a Unix-socket peer has no address to trust")
	assert.False(t, (&Forwarder{}).trustsProxy(fakeFrom(tcpAddr("10.1.2.3:4"))))
}

func fakeFrom(a net.Addr) *fakeConn { return &fakeConn{remote: a} }

// TestAdmissionMoveChargesTheClient: a balancer's connection holds one of
// the balancer's places only until its header is read; then it is the
// client's, under the client's cap, and a connection moved to a client
// at its cap cuts that client's oldest.
func TestAdmissionMoveChargesTheClient(t *testing.T) {
	tb := newTable(100, 2)
	client1, client2 := sourceOfIP(netip.MustParseAddr("203.0.113.1")), sourceOfIP(netip.MustParseAddr("203.0.113.2"))
	fromLB := func() *ticket {
		c := fake("192.0.2.10")
		tb.conns = append(tb.conns, c)
		tb.ts = append(tb.ts, tb.admission.add(c, true))
		return tb.ts[len(tb.ts)-1]
	}
	t0, t1 := fromLB(), fromLB()
	t0.move(client1, t0.conn, 0)
	t1.move(client1, t1.conn, 0)
	t2, t3 := fromLB(), fromLB()
	assert.Empty(t, tb.cut(), "the balancer was charged for connections it only relayed")
	t2.move(client1, t2.conn, 0)
	assert.Equal(t, []int{0}, tb.cut(), "the client's oldest goes when a third is moved to it")
	assert.ErrorIs(t, t0.leave(), errEvicted)
	t3.move(client2, t3.conn, 0)
	assert.Equal(t, 3, tb.len())
	assert.Len(t, tb.sources, 2, "the balancer holds no place any more")
	for _, tk := range []*ticket{t1, t2, t3} {
		assert.NoError(t, tk.leave())
	}
}

// TestMoveWithTheFirstMessage: a header that came with the whole first
// message moves its ticket among those past it, so it is not the first to
// go; one that came with part of it waits for the rest.
func TestMoveWithTheFirstMessage(t *testing.T) {
	a := newAdmission(100, 2, helloRule{size: 10, timeout: time.Minute}, slog.New(slog.DiscardHandler))
	lb := fake("192.0.2.10")
	whole, part := a.add(lb, true), a.add(lb, true)
	whole.move(sourceOfIP(netip.MustParseAddr("203.0.113.1")), lb, 10)
	part.move(sourceOfIP(netip.MustParseAddr("203.0.113.1")), lb, 4)
	assert.True(t, whole.heard)
	assert.False(t, part.heard)
	a.add(fake("203.0.113.1"), false) // at the cap: one of the client's goes
	assert.ErrorIs(t, part.leave(), errEvicted)
	assert.NoError(t, whole.leave())
}

// TestProxiedFloodCutsOnlyItsClient: through one trusted balancer, a
// client floods idle connections; each counts against the client its
// header names, so the flood cuts its own and another client's
// connection, through the same balancer, is served.
func TestProxiedFloodCutsOnlyItsClient(t *testing.T) {
	cfg := testConfig(t)
	obs := newFailures()
	addr, headers, _ := behindBalancer(t, cfg, func(f *Forwarder) {
		f.Observer = obs
		f.MaxPending = 64
		f.MaxPendingPerSource = 8
	})
	flood := v2(t, tcpAddr("198.51.100.2:1"), tcpAddr("192.0.2.80:8022"))
	var idle []net.Conn
	for range 100 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		_, err = c.Write(flood)
		require.NoError(t, err)
		idle = append(idle, c)
	}
	viaBalancer(t, addr, v2(t, tcpAddr("198.51.100.1:2"), tcpAddr("192.0.2.80:8022")), cfg, "honest")
	h := <-headers
	require.NotNil(t, h)
	assert.Equal(t, "198.51.100.1:2", h.SourceAddr.String())
	require.Eventually(t, func() bool { return obs.count(obs.handshake, "evicted") >= 100-8 }, 10*time.Second, 10*time.Millisecond,
		"evicted: %d", obs.count(obs.handshake, "evicted"))
	assert.True(t, cutWithin(idle[0], 5*time.Second), "the flood's oldest was not cut")
}

// TestProxiedConnRead: what was read past the header comes first, then
// the socket; the addresses are the header's; CloseWrite and NetConn
// reach the socket.
func TestProxiedConnRead(t *testing.T) {
	client, raw := accepted(t)
	_, err := client.Write([]byte("PROXY TCP4 203.0.113.7 192.0.2.80 5555 8022\r\nfirst"))
	require.NoError(t, err)
	time.Sleep(50 * time.Millisecond) // one read takes it all
	c, err := readProxyHeader(raw, time.Now().Add(5*time.Second))
	require.NoError(t, err)
	assert.Equal(t, "203.0.113.7:5555", c.RemoteAddr().String())
	assert.Equal(t, "192.0.2.80:8022", c.LocalAddr().String())
	assert.Equal(t, []byte("first"), c.pending)
	_, err = client.Write([]byte(" then more"))
	require.NoError(t, err)
	require.NoError(t, client.(*net.TCPConn).CloseWrite())
	got, err := io.ReadAll(c)
	require.NoError(t, err)
	assert.Equal(t, "first then more", string(got))
	assert.Same(t, raw, c.NetConn())
	require.NoError(t, c.CloseWrite())
	n, err := client.Read(make([]byte, 1))
	assert.Zero(t, n)
	assert.ErrorIs(t, err, io.EOF, "CloseWrite did not reach the socket")
}

func TestProxyHeaderReason(t *testing.T) {
	_, raw := accepted(t)
	_, err := readProxyHeader(raw, time.Now().Add(50*time.Millisecond))
	assert.Equal(t, "proxy_header", Reason(err), "a deadline on the header is the header's failure, not a timeout")
	assert.Contains(t, Reasons().Handshake, "proxy_header")
	assert.Equal(t, "evicted", Reason(&cutError{cause: errEvicted, err: err}))
}

// TestHeaderAndFirstMessageUnreadStillCount: a balancer's connection
// whose socket holds its PROXY header and whole first message, unread,
// is spared as one that has read them; one with only its header is not
// (Linux, where the socket can be peeked at).
func TestHeaderAndFirstMessageUnreadStillCount(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the socket is peeked at on Linux only")
	}
	a := newAdmission(100, 2, helloRule{size: 107, timeout: time.Minute}, slog.New(slog.DiscardHandler))
	header := v2(t, tcpAddr("203.0.113.7:5555"), tcpAddr("192.0.2.80:8022"))
	full, fullRaw := accepted(t)
	_, err := full.Write(append(header, make([]byte, 107)...))
	require.NoError(t, err)
	part, partRaw := accepted(t)
	_, err = part.Write(append(header, make([]byte, 106)...))
	require.NoError(t, err)
	time.Sleep(50 * time.Millisecond) // on loopback, in the sockets by now
	spared, cut := a.add(fullRaw, true), a.add(partRaw, true)
	_, third := accepted(t)
	a.add(third, true) // the balancer's third, at its cap of 2
	assert.ErrorIs(t, cut.leave(), errEvicted)
	assert.NoError(t, spared.leave())
	assert.False(t, headerAndMessageIn(third, 107), "an empty socket")
}

func TestProxyHeaderSize(t *testing.T) {
	v2h := v2(t, tcpAddr("203.0.113.7:5555"), tcpAddr("192.0.2.80:8022"))
	for _, tc := range []struct {
		b    []byte
		want int
	}{
		{v2h, len(v2h)},
		{append(slices.Clone(v2h), "more"...), len(v2h)},
		{v2h[:len(v2h)-1], 0},
		{v2h[:15], 0},
		{[]byte("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\nmore"), 32},
		{[]byte("PROXY TCP4 1.2.3.4"), 0},
		{[]byte{2, 0, 0}, 0},
	} {
		assert.Equal(t, tc.want, proxyHeaderSize(tc.b), "%q", tc.b)
	}
}

// openedOutcomes is outcomes that also counts connections opened.
type openedOutcomes struct {
	*outcomes
	opened atomic.Int32
}

func (o *openedOutcomes) ConnOpened() { o.opened.Add(1) }

// TestProxyHeaderWaitCutByShutdown: a balancer's connection still owing
// its PROXY header when the shutdown comes ended with the shutdown: one
// end, and no handshake failure, however the cut reaches it (its ticket
// cut, or its socket closed at the end of the grace period).
func TestProxyHeaderWaitCutByShutdown(t *testing.T) {
	cfg := testConfig(t)
	for i := range 20 {
		obs := &openedOutcomes{outcomes: newOutcomes()}
		f := &Forwarder{
			SecureSide: SecureInbound,
			Secure: func(ctx context.Context, c net.Conn) (Conn, error) {
				sc := spipe.Server(c, cfg)
				return sc, sc.HandshakeContext(ctx)
			},
			Dial:             (&TargetDialer{Target: Addr{Network: "tcp", Address: freeAddr(t)}}).Dial,
			HandshakeTimeout: 5 * time.Second,
			AcceptProxyFrom:  loopback,
			FirstMessageSize: 107,
			Observer:         obs,
		}
		ln := listenTCP(t)
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- f.Serve(ctx, ln) }()
		c, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		require.Eventually(t, func() bool { return obs.opened.Load() == 1 }, 10*time.Second, time.Millisecond)
		cancel()
		require.NoError(t, <-served)
		c.Close()
		assert.Equal(t, map[string]int{"end:shutdown": 1}, obs.snapshot(), "round %d", i)
	}
}
