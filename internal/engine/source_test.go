package engine

import (
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSourceGrouping(t *testing.T) {
	src := func(ip string) source { return sourceOf(fake(ip)) }
	assert.Equal(t, src("192.0.2.1"), src("192.0.2.1"))
	assert.NotEqual(t, src("192.0.2.1"), src("192.0.2.2"), "each IPv4 address is a source")
	assert.Equal(t, src("192.0.2.1"), src("::ffff:192.0.2.1"), "an IPv4-mapped address is the IPv4 address")
	assert.Equal(t, src("2001:db8:1:2::1"), src("2001:db8:1:2:ffff:ffff:ffff:ffff"), "one /64 is one source")
	assert.NotEqual(t, src("2001:db8:1:2::1"), src("2001:db8:1:3::1"), "the next /64 is another")
	zoned := &fakeConn{remote: &net.TCPAddr{IP: net.ParseIP("fe80::1"), Zone: "eth0"}}
	assert.Equal(t, src("fe80::2"), sourceOf(zoned), "the zone does not make another source")

	assert.Equal(t, "192.0.2.1", src("::ffff:192.0.2.1").String())
	assert.Equal(t, "2001:db8:1:2::/64", src("2001:db8:1:2:3:4:5:6").String())
}

// TestSourceOfUnixPeer: on Linux a Unix-socket peer counts as its user;
// elsewhere all Unix-socket peers share one source.
func TestSourceOfUnixPeer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", path)
	require.NoError(t, err)
	defer ln.Close()
	c, err := net.Dial("unix", path)
	require.NoError(t, err)
	defer c.Close()
	s, err := ln.Accept()
	require.NoError(t, err)
	defer s.Close()
	got := sourceOf(s)
	if runtime.GOOS == "linux" {
		assert.Equal(t, source{uid: int64(os.Getuid()) + 1}, got)
		assert.Equal(t, "uid "+strconv.Itoa(os.Getuid()), got.String())
	} else {
		assert.Equal(t, source{}, got)
		assert.Equal(t, "local", got.String())
	}
}
