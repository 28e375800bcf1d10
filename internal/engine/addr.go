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
// resolved at each dial, never cached) or an absolute Unix-socket path.
type Addr struct {
	Network string // "tcp" or "unix"
	Address string // host:port for tcp, a clean absolute path for unix
}

// String returns the address as the user wrote it (modulo path cleaning).
func (a Addr) String() string { return a.Address }

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

// errAddrSyntax is the hint every malformed address gets, so the user sees
// every accepted form at once.
var errAddrSyntax = errors.New("want host:port, [v6]:port, v4:port or an absolute Unix-socket path")

// ParseAddr parses an address given on the command line. An address that
// starts with "/" is a Unix-socket path; anything else must be host:port
// with a numeric port (0 to 65535). IPv6 literals need brackets.
func ParseAddr(s string) (Addr, error) {
	if s == "" {
		return Addr{}, fmt.Errorf("empty address: %w", errAddrSyntax)
	}
	if strings.HasPrefix(s, "/") {
		return Addr{Network: "unix", Address: filepath.Clean(s)}, nil
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
	if (strings.HasPrefix(s, "[") || strings.Contains(host, ":")) && net.ParseIP(stripZone(host)) == nil {
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
