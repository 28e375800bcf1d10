package spipe

import (
	"io"
	"net"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnknownModeRefused: a client asking for a mode this server does not
// run (the multiplexed mode, which a server runs only with Multiplex set,
// the retired mode 2, or any value this version does not define) is
// refused before anything else is negotiated: the server fails with
// ErrUnsupportedMode and sends nothing, so the client sees the connection
// close and names the mode among the likely causes.
func TestUnknownModeRefused(t *testing.T) {
	key := newTestKey(t)
	for _, c := range []struct {
		mode      byte
		multiplex bool // the server runs mode 3
	}{{2, false}, {3, false}, {200, false}, {255, false}, {2, true}, {4, true}} {
		mode := c.mode
		a, b := testutil.TCPPair(t)
		ccfg := &Config{Keys: []*Key{key}, mode: mode}
		_, _, cerr, serr := handshakePair(t, a, b, ccfg, &Config{Keys: []*Key{key}, Multiplex: c.multiplex})
		assert.ErrorIs(t, serr, ErrUnsupportedMode, "mode %d", mode)
		assert.ErrorIs(t, cerr, ErrTruncated, "mode %d", mode)
		assert.ErrorContains(t, cerr, "a mode the server does not run")
	}
}

// TestMultiplexNegotiation: Config.Multiplex on a client asks for mode 3
// and on a server runs it beside the byte stream, so one listener serves
// both kinds of client; ConnectionState says which each one got, on both
// ends. A server without Multiplex refuses a multiplexing client as it
// refuses any mode it does not run.
func TestMultiplexNegotiation(t *testing.T) {
	key := newTestKey(t)
	cfg := func(mux bool) *Config { return &Config{Keys: []*Key{key}, Multiplex: mux} }
	for _, c := range []struct {
		client, server bool
		want           bool // multiplexed; refused if the client asked and the server does not run it
	}{
		{false, false, false},
		{false, true, false},
		{true, true, true},
	} {
		a, b := testutil.TCPPair(t)
		cli, srv, cerr, serr := handshakePair(t, a, b, cfg(c.client), cfg(c.server))
		require.NoError(t, cerr, "client multiplex=%v, server multiplex=%v", c.client, c.server)
		require.NoError(t, serr)
		assert.Equal(t, c.want, cli.ConnectionState().Multiplexed, "client's view")
		assert.Equal(t, c.want, srv.ConnectionState().Multiplexed, "server's view")
	}
	a, b := testutil.TCPPair(t)
	_, _, cerr, serr := handshakePair(t, a, b, cfg(true), cfg(false))
	assert.ErrorIs(t, serr, ErrUnsupportedMode)
	assert.ErrorIs(t, cerr, ErrTruncated)
}

// TestMultiplexModeByte: the multiplexed mode is mode 3 on the wire, in
// the ClientHello and, answered, in the ServerHello.
func TestMultiplexModeByte(t *testing.T) {
	key := newTestKey(t)
	ipsk := importKey(&key.psk, "")
	scfg := &Config{Keys: []*Key{key}, Multiplex: true}
	s, err := (&Config{Keys: []*Key{key}, Multiplex: true}).settings()
	require.NoError(t, err)
	require.Equal(t, byte(3), s.mode, "a multiplexing client asks for mode 3")
	h, _, err := newHello(msgClientHello, s, true)
	require.NoError(t, err)
	s1 := keyholderHello(t, scfg, h, &ipsk)
	require.NotNil(t, s1, "the server refused mode 3")
	assert.Equal(t, byte(3), s1[3], "the ServerHello answers mode 3")
}

// keyholderHello sends a ClientHello built from h under ipsk to a real
// server and returns the server's answer (nil if it closed instead).
func keyholderHello(t *testing.T, scfg *Config, h *hello, ipsk *[32]byte) []byte {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	go Server(b, scfg).Handshake()
	var c1 [helloSize]byte
	h.marshal(&c1)
	helloMAC(c1[helloBody:], ipsk, nil, c1[:helloBody])
	_, err := a.Write(c1[:])
	require.NoError(t, err)
	s1 := make([]byte, helloSize)
	if _, err := io.ReadFull(a, s1); err != nil {
		return nil
	}
	var want [macSize]byte
	helloMAC(want[:], ipsk, c1[:], s1[:helloBody])
	require.Equal(t, want[:], s1[helloBody:], "the ServerHello is authentic")
	return s1
}

// TestServerIgnoresUnknownClientFlags: flag bits this version does not
// define are how a later client offers an optional feature; a server
// ignores them and answers only the bits it knows.
func TestServerIgnoresUnknownClientFlags(t *testing.T) {
	key := newTestKey(t)
	ipsk := importKey(&key.psk, "")
	scfg := &Config{Keys: []*Key{key}}
	s, err := scfg.settings()
	require.NoError(t, err)
	for _, flags := range []byte{0x80, 0x81, 0xfe, 0xff} {
		h, _, err := newHello(msgClientHello, s, flags&flagEphemeral != 0)
		require.NoError(t, err)
		h.flags = flags
		s1 := keyholderHello(t, scfg, h, &ipsk)
		require.NotNil(t, s1, "flags %#x: the server closed instead of answering", flags)
		assert.Equal(t, flags&flagEphemeral, s1[2], "flags %#x: the server answers only the bits it knows", flags)
		assert.Equal(t, byte(modeStream), s1[3], "the server names the mode it runs")
	}
}

// keyholderServerHello runs a real client against a server that holds
// the key and answers with the ServerHello edit makes of a valid one.
func keyholderServerHello(t *testing.T, ccfg *Config, edit func(sh *hello)) error {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	s, err := ccfg.settings()
	require.NoError(t, err)
	ipsk := importKey(&s.keys[0].psk, s.context)
	go func() {
		var c1 [helloSize]byte
		if _, err := io.ReadFull(b, c1[:]); err != nil {
			return
		}
		ch, err := parseHello(c1[:], msgClientHello)
		if err != nil {
			return
		}
		sh, _, err := newHello(msgServerHello, s, ch.flags&flagEphemeral != 0)
		if err != nil {
			return
		}
		sh.suite, sh.mode = byte(s.suites[0]), ch.mode
		edit(sh)
		var s1 [helloSize]byte
		sh.marshal(&s1)
		helloMAC(s1[helloBody:], &ipsk, c1[:], s1[:helloBody])
		b.Write(s1[:])
		io.Copy(io.Discard, b)
	}()
	return Client(a, ccfg).Handshake()
}

// TestClientChecksServerHello: a ServerHello that is authentic but sets a
// flag the client did not set, answers another mode, or sends a key the
// client did not ask for is malformed.
func TestClientChecksServerHello(t *testing.T) {
	key := newTestKey(t)
	cases := map[string]struct {
		cfg  *Config
		edit func(*hello)
	}{
		"unknown flag":       {&Config{Keys: []*Key{key}}, func(h *hello) { h.flags |= 0x02 }},
		"other mode":         {&Config{Keys: []*Key{key}}, func(h *hello) { h.mode = 2 }},
		"mode 1 to mode 3":   {&Config{Keys: []*Key{key}, Multiplex: true}, func(h *hello) { h.mode = 1 }},
		"mode 0":             {&Config{Keys: []*Key{key}}, func(h *hello) { h.mode = 0 }},
		"unasked key":        {&Config{Keys: []*Key{key}, ForwardSecrecy: ForwardSecrecyOff}, func(h *hello) { h.flags |= flagEphemeral; h.pub[0] = 9 }},
		"key without flag":   {&Config{Keys: []*Key{key}}, func(h *hello) { h.flags = 0; h.pub[0] = 9 }},
		"suite not offered":  {&Config{Keys: []*Key{key}}, func(h *hello) { h.suite = 4; h.suites |= 1 << 4 }},
		"suite not its own":  {&Config{Keys: []*Key{key}}, func(h *hello) { h.suites = 1 << 3 }},
		"payload below 64":   {&Config{Keys: []*Key{key}}, func(h *hello) { h.maxPayload = 63 }},
		"payload above 1MiB": {&Config{Keys: []*Key{key}}, func(h *hello) { h.maxPayload = 1<<20 + 1 }},
	}
	for name, c := range cases {
		err := keyholderServerHello(t, c.cfg, c.edit)
		assert.ErrorIs(t, err, ErrMalformedHandshake, name)
	}
	// The edges of the payload range are allowed.
	for _, n := range []uint32{64, 1 << 20} {
		err := keyholderServerHello(t, &Config{Keys: []*Key{key}}, func(h *hello) { h.maxPayload = n })
		assert.ErrorIs(t, err, nil, "max payload %d", n)
	}
}
