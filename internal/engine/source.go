package engine

import (
	"net"
	"net/netip"
	"strconv"
)

// source is what a connection counts against in the admission table: its
// peer's IPv4 address, or the /64 of its IPv6 address (the least a site
// is given, so one host cannot pose as many by hopping addresses within
// it); an IPv4 address mapped into IPv6 counts as the IPv4 address. A
// Unix-socket peer counts as its user where the system says who that is
// (Linux: SO_PEERCRED), so one local user cannot crowd out another; every
// other peer counts as one shared source.
type source struct {
	ip  netip.Addr // the address, or the /64 prefix's first address
	uid int64      // a Unix-socket peer's user ID plus one; 0 if unknown
}

func sourceOf(c net.Conn) source {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return sourceOfIP(a.AddrPort().Addr())
	}
	if u, ok := c.(*net.UnixConn); ok {
		if uid, ok := peerUID(u); ok {
			return source{uid: int64(uid) + 1}
		}
	}
	return source{}
}

func sourceOfIP(ip netip.Addr) source {
	ip = ip.Unmap().WithZone("")
	if ip.Is6() {
		ip = netip.PrefixFrom(ip, 64).Masked().Addr()
	}
	return source{ip: ip}
}

// String names the source in logs: "192.0.2.1", "2001:db8::/64",
// "uid 1000" or "local".
func (s source) String() string {
	switch {
	case s.ip.Is4():
		return s.ip.String()
	case s.ip.Is6():
		return netip.PrefixFrom(s.ip, 64).String()
	case s.uid > 0:
		return "uid " + strconv.FormatInt(s.uid-1, 10)
	}
	return "local"
}
