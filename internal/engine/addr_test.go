package engine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseAddr(t *testing.T) {
	good := map[string]Addr{
		"127.0.0.1:8022":        {"tcp", "127.0.0.1:8022"},
		"[::1]:8022":            {"tcp", "[::1]:8022"},
		"[fe80::1%eth0]:22":     {"tcp", "[fe80::1%eth0]:22"},
		"example.com:443":       {"tcp", "example.com:443"},
		":8022":                 {"tcp", ":8022"},
		"0.0.0.0:0":             {"tcp", "0.0.0.0:0"},
		"/run/spipe.sock":       {"unix", "/run/spipe.sock"},
		"/run//x/../spipe.sock": {"unix", "/run/spipe.sock"},
		// ssh's ProxyCommand '-t [%h]:8022' for any kind of host.
		"[server.example]:8022": {"tcp", "server.example:8022"},
		"[192.0.2.1]:8022":      {"tcp", "192.0.2.1:8022"},
		"[2001:db8::1]:8022":    {"tcp", "[2001:db8::1]:8022"},
		"systemd":               {"systemd", ""},
		"systemd:spipe":         {"systemd", "spipe"},
		"systemd.example:80":    {"tcp", "systemd.example:80"},
	}
	for in, want := range good {
		got, err := ParseAddr(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}
	bad := map[string]string{
		"":               "empty address",
		"localhost":      "want host:port",
		"::1:80":         "want host:port",
		"1.2.3.4:http":   `port "http" is not a number`,
		"1.2.3.4:65536":  `port "65536" is not a number`,
		"1.2.3.4:-1":     `port "-1" is not a number`,
		"run/spipe.sock": "Unix-socket paths must be absolute",
		"[1:2:3]:80":     "bad IPv6 literal",
		"systemd:":       "want systemd or systemd:NAME",
		"systemd:a:b":    "want systemd or systemd:NAME",
		"a b:80":         "bad host",
		"./x.sock":       "Unix-socket paths must be absolute",
		"[::1]":          "want host:port",
	}
	for in, msg := range bad {
		_, err := ParseAddr(in)
		if assert.Error(t, err, in) {
			assert.Contains(t, err.Error(), msg, in)
		}
	}
}

func TestAddrString(t *testing.T) {
	for _, s := range []string{"127.0.0.1:8022", "[::1]:8022", "/run/spipe.sock", "systemd", "systemd:spipe"} {
		a, err := ParseAddr(s)
		require.NoError(t, err, s)
		assert.Equal(t, s, a.String())
		assert.Equal(t, s == "/run/spipe.sock", a.IsUnix(), s)
		assert.Equal(t, strings.HasPrefix(s, "systemd"), a.IsSystemd(), s)
	}
}

func TestParseSourceIP(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.1":        "192.0.2.1:0",
		"192.0.2.1:4000":   "192.0.2.1:4000",
		"2001:db8::1":      "[2001:db8::1]:0",
		"[2001:db8::1]":    "[2001:db8::1]:0",
		"[2001:db8::1]:80": "[2001:db8::1]:80",
	} {
		a, err := ParseSourceIP(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, a.String(), in)
		}
	}
	for _, in := range []string{"", "example.com", "example.com:80", "192.0.2.1:x", "192.0.2.1:99999"} {
		_, err := ParseSourceIP(in)
		assert.Error(t, err, in)
	}
}
