package engine

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
)

// Addr is where to listen or what to dial: a TCP host:port (the host is
// resolved at each dial, never cached), an absolute Unix-socket path, or a
// listening socket passed by systemd (socket activation; listen only).
type Addr struct {
	Network string // "tcp", "unix" or "systemd"
	// Address is host:port for tcp, a clean absolute path for unix, and
	// for systemd the socket's name (FileDescriptorName=), "" for the
	// first socket passed.
	Address string
}

// String returns the address as the user wrote it (modulo path cleaning
// and brackets around a host name).
func (a Addr) String() string {
	if a.IsSystemd() {
		if a.Address == "" {
			return systemdPrefix
		}
		return systemdPrefix + ":" + a.Address
	}
	return a.Address
}

// Port returns the TCP port (0 for a Unix socket).
func (a Addr) Port() int {
	if a.IsUnix() {
		return 0
	}
	_, port, _ := net.SplitHostPort(a.Address)
	p, _ := parsePort(port)
	return p
}

// IsUnix reports whether a is a Unix-socket path.
func (a Addr) IsUnix() bool { return a.Network == "unix" }

// IsSystemd reports whether a is a socket passed by systemd.
func (a Addr) IsSystemd() bool { return a.Network == systemdPrefix }

// systemdPrefix is how an address names a socket passed by systemd:
// "systemd" (the first one) or "systemd:NAME".
const systemdPrefix = "systemd"

// errAddrSyntax is the hint every malformed address gets, so the user sees
// every accepted form at once.
var errAddrSyntax = errors.New("want host:port, [v6]:port, v4:port, an absolute Unix-socket path, or systemd[:NAME] for socket activation")

// ParseAddr parses an address given on the command line. An address that
// starts with "/" is a Unix-socket path; "systemd" or "systemd:NAME" is a
// socket passed by systemd; anything else must be host:port with a numeric
// port (0 to 65535). IPv6 literals need brackets; a host name or IPv4
// address may have them too, so that ssh's "[%h]:port" works for every
// host.
func ParseAddr(s string) (Addr, error) {
	if s == "" {
		return Addr{}, fmt.Errorf("empty address: %w", errAddrSyntax)
	}
	if strings.HasPrefix(s, "/") {
		return Addr{Network: "unix", Address: filepath.Clean(s)}, nil
	}
	if name, ok := strings.CutPrefix(s, systemdPrefix); ok && (name == "" || name[0] == ':') {
		name = strings.TrimPrefix(name, ":")
		if s != systemdPrefix && (name == "" || strings.ContainsAny(name, ": \t")) {
			return Addr{}, fmt.Errorf("address %q: want systemd or systemd:NAME, NAME as in FileDescriptorName=", s)
		}
		return Addr{Network: systemdPrefix, Address: name}, nil
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		if !strings.Contains(s, ":") && strings.Contains(s, "/") {
			return Addr{}, fmt.Errorf("address %q: Unix-socket paths must be absolute", s)
		}
		return Addr{}, fmt.Errorf("address %q: %w", s, errAddrSyntax)
	}
	if strings.ContainsAny(host, " /") {
		return Addr{}, fmt.Errorf("address %q: bad host %q", s, host)
	}
	if strings.Contains(host, ":") && net.ParseIP(stripZone(host)) == nil {
		return Addr{}, fmt.Errorf("address %q: bad IPv6 literal %q", s, host)
	}
	if _, err := parsePort(port); err != nil {
		return Addr{}, fmt.Errorf("address %q: %w", s, err)
	}
	return Addr{Network: "tcp", Address: net.JoinHostPort(host, port)}, nil
}

// ParseSourceIP parses the -b flag: an IP literal, optionally with a port
// ("192.0.2.1", "[2001:db8::1]:0", "192.0.2.1:4000"), used as the local
// address of outgoing TCP connections.
func ParseSourceIP(s string) (*net.TCPAddr, error) {
	if ip := net.ParseIP(stripBrackets(s)); ip != nil {
		return &net.TCPAddr{IP: ip}, nil
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return nil, fmt.Errorf("source address %q: want an IP address or IP:port", s)
	}
	ip := net.ParseIP(stripZone(host))
	if ip == nil {
		return nil, fmt.Errorf("source address %q: %q is not an IP address", s, host)
	}
	p, err := parsePort(port)
	if err != nil {
		return nil, fmt.Errorf("source address %q: %w", s, err)
	}
	return &net.TCPAddr{IP: ip, Port: p}, nil
}

func parsePort(port string) (int, error) {
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	return int(p), nil
}

func stripZone(host string) string {
	if i := strings.IndexByte(host, '%'); i >= 0 {
		return host[:i]
	}
	return host
}

func stripBrackets(s string) string {
	if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
		return s[1 : len(s)-1]
	}
	return s
}
