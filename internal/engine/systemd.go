package engine

import (
	"fmt"
	"net"
	"os"
	"strings"
	"sync"

	"github.com/coreos/go-systemd/v22/activation"
)

// systemdSockets are the sockets systemd passed to this process (socket
// activation: LISTEN_FDS, LISTEN_PID, LISTEN_FDNAMES), read once: the
// library unsets the variables so that children do not inherit them.
var systemdSockets = struct {
	once  sync.Once
	files []*os.File
	taken []bool
	mu    sync.Mutex
}{}

// listenSystemd returns a listener on the socket systemd passed under
// name ("" for the first one). Each socket is handed out once.
func listenSystemd(a Addr, opts ListenOptions) (net.Listener, error) {
	s := &systemdSockets
	s.once.Do(func() {
		s.files = activation.Files(true)
		s.taken = make([]bool, len(s.files))
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.files) == 0 {
		return nil, fmt.Errorf("listen on %s: systemd passed no socket (is the service started by its .socket unit? LISTEN_FDS is unset)", a)
	}
	names := make([]string, len(s.files))
	for i, f := range s.files {
		names[i] = f.Name()
		if a.Address != "" && f.Name() != a.Address || a.Address == "" && i > 0 {
			continue
		}
		if s.taken[i] {
			return nil, fmt.Errorf("listen on %s: %w (the socket is used twice)", a, ErrAddrInUse)
		}
		ln, err := net.FileListener(f)
		if err != nil {
			return nil, fmt.Errorf("listen on %s: socket %s is not a listening stream socket: %w", a, f.Name(), err)
		}
		s.taken[i] = true
		f.Close() // ln holds a duplicate
		if opts.NoKeepAlive {
			if tl, ok := ln.(*net.TCPListener); ok {
				return noKeepAliveListener{tl}, nil
			}
		}
		return ln, nil
	}
	return nil, fmt.Errorf("listen on %s: systemd passed no socket of that name (it passed: %s; set FileDescriptorName= in the .socket unit)",
		a, strings.Join(names, ", "))
}

// noKeepAliveListener turns TCP keep-alives off on accepted connections,
// which a listener made from a passed socket would otherwise enable.
type noKeepAliveListener struct{ *net.TCPListener }

func (l noKeepAliveListener) Accept() (net.Conn, error) {
	c, err := l.AcceptTCP()
	if err != nil {
		return nil, err
	}
	_ = c.SetKeepAlive(false)
	return c, nil
}
