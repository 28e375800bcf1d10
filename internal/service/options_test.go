package service_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/engine"
	"github.com/spipe-dev/spipe/internal/service"
	"github.com/spipe-dev/spipe/internal/testutil/pipetest"
)

// TestValidate: every check names the flag to fix, and the options the
// command line makes by default pass.
func TestValidate(t *testing.T) {
	unix, err := engine.ParseAddr("/run/spipe.sock")
	require.NoError(t, err)
	listen := func() service.Options {
		return pipetest.Options(t, service.Listen, "127.0.0.1:0", "127.0.0.1:22", "/k")
	}
	connect := func() service.Options {
		return pipetest.Options(t, service.Connect, "", "127.0.0.1:8022", "/k")
	}
	ok := listen()
	require.NoError(t, ok.Validate())
	ok = connect()
	require.NoError(t, ok.Validate())

	cases := []struct {
		name  string
		opts  func() service.Options
		tweak func(*service.Options)
		msg   string
	}{
		{"no target", listen, func(o *service.Options) { o.Target = engine.Addr{} }, "-t/--target is required"},
		{"no key", listen, func(o *service.Options) { o.KeyFiles = nil }, "-k/--key is required"},
		{"connect two keys", connect, func(o *service.Options) { o.KeyFiles = []string{"/a", "/b"} }, "-k/--key: connect takes one key"},
		{"listen no source", listen, func(o *service.Options) { o.Source = nil }, "-s/--source is required"},
		{"stdin key and stdio", connect, func(o *service.Options) { o.KeyFiles = []string{"-"} }, "-k - needs -s: without -s, standard input carries the connection"},
		{"target port 0", listen, func(o *service.Options) { o.Target, _ = engine.ParseAddr("127.0.0.1:0") }, "-t/--target: port 0 cannot be dialled"},
		{"pfs contradiction", listen, func(o *service.Options) { o.DisableForwardSecrecy, o.RequireForwardSecrecy = true, true }, "--no-pfs and --require-pfs contradict each other"},
		{"negative pad", listen, func(o *service.Options) { o.PadTo = -5 }, "--pad -5: want 0 to 65536"},
		{"pad above a frame", listen, func(o *service.Options) { o.PadTo = 65537 }, "--pad 65537: want 0 to 65536"},
		{"negative max conns", listen, func(o *service.Options) { o.MaxConns = -1 }, "--max-conns -1: want 0 (no limit) or more"},
		{"systemd target", listen, func(o *service.Options) { o.Target, _ = engine.ParseAddr("systemd:x") }, "-t/--target: systemd sockets are for listening (-s), not for dialling"},
		{"negative max pending", listen, func(o *service.Options) { o.MaxPending = -1 }, "--max-pending -1: must not be negative"},
		{"handshake timeout 0", listen, func(o *service.Options) { o.HandshakeTimeout = 0 }, "--handshake-timeout 0s: must be positive"},
		{"negative idle", listen, func(o *service.Options) { o.IdleTimeout = -time.Second }, "--idle-timeout -1s: must not be negative"},
		{"negative grace", listen, func(o *service.Options) { o.ShutdownTimeout = -time.Second }, "--shutdown-timeout -1s: must not be negative"},
		{"metrics on a socket path", listen, func(o *service.Options) { o.MetricsAddr = &unix }, `--metrics "/run/spipe.sock": want host:port`},
		{"accept proxy from on connect", connect, func(o *service.Options) { o.AcceptProxyFrom = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")} },
			"--accept-proxy-from is for listen: connect's clients are local"},
		{"mux on listen", listen, func(o *service.Options) { o.Mux = true }, "--mux and --mux-carriers are for connect: listen serves multiplexed clients without them"},
		{"carriers without mux", connect, func(o *service.Options) { o.MuxCarriers = 2 }, "--mux-carriers needs --mux"},
		{"too many carriers", connect, func(o *service.Options) { o.Mux, o.MuxCarriers = true, 65 }, "--mux-carriers 65: want 1 to 64"},
		{"negative mux streams", listen, func(o *service.Options) { o.MuxStreams = -1 }, "--mux-streams -1: must not be negative"},
		{"mux window too small", listen, func(o *service.Options) { o.MuxWindow = 65536 }, "--mux-window 65536: want 262144 (256 KiB) to 16777216 (16 MiB) bytes"},
		{"socket mode owner cannot write", listen, func(o *service.Options) { o.SocketMode = 0o440 }, "--socket-mode 0440: want octal permissions such as 0660 that let the owner read and write"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts()
			tc.tweak(&o)
			assert.EqualError(t, o.Validate(), tc.msg)
			// Start refuses the same options with the same message,
			// before it touches a key file or a socket.
			_, err := service.Start(t.Context(), o, nil)
			assert.EqualError(t, err, tc.msg)
		})
	}
}
