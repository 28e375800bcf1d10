package mux

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/libp2p/go-yamux/v5"
	"github.com/stretchr/testify/assert"
)

// TestCauseOfEnd: why a session ended, from the library's reason and
// what the carrier's I/O saw. A verdict of the library's own on what it
// read (whatever its error type) wins over a write that the close cut
// short afterwards (it raced the GoAway), a real read or write failure
// wins over the library's echo of it, and a deliberate close is no
// failure.
func TestCauseOfEnd(t *testing.T) {
	readFailed := errors.New("spipe: frame failed authentication")
	cases := []struct {
		name      string
		libErr    error
		read      error // the carrier's read error
		written   error // its write error
		closing   bool
		want      error // errors.Is target; nil: a clean end
		wantOther bool  // a failure, but not ErrProtocol
	}{
		{name: "window overrun, then its GoAway cut by the close", libErr: yamux.ErrRecvWindowExceeded,
			written: fmt.Errorf("write: %w", net.ErrClosed), want: ErrProtocol},
		{name: "stream opened twice", libErr: yamux.ErrDuplicateStream, want: ErrProtocol},
		{name: "garbage", libErr: yamux.ErrInvalidVersion, want: ErrProtocol},
		{name: "stream with a server's id, then a write cut by the close", libErr: errors.New("both yamux endpoints are clients"),
			written: fmt.Errorf("write: %w", net.ErrClosed), want: ErrProtocol},
		{name: "peer reset the carrier under a write", libErr: syscall.ECONNRESET, written: syscall.ECONNRESET,
			want: syscall.ECONNRESET, wantOther: true},
		{name: "peer's protocol-error GoAway", libErr: &yamux.GoAwayError{Remote: true, ErrorCode: 1}, want: ErrProtocol},
		{name: "tampered frame", libErr: readFailed, read: readFailed, want: readFailed, wantOther: true},
		{name: "keepalive timeout", libErr: yamux.ErrKeepAliveTimeout, want: os.ErrDeadlineExceeded, wantOther: true},
		{name: "peer's clean GoAway", libErr: &yamux.GoAwayError{Remote: true}},
		{name: "our Close", libErr: fmt.Errorf("read: %w", net.ErrClosed), written: fmt.Errorf("write: %w", net.ErrClosed), closing: true},
	}
	for _, tc := range cases {
		c := &carrier{}
		if tc.read != nil {
			c.note(&c.readErr, tc.read)
		}
		if tc.written != nil {
			c.note(&c.writeErr, tc.written)
		}
		s := &Session{carrier: c}
		s.closing.Store(tc.closing)
		got := s.cause(tc.libErr)
		if tc.want == nil {
			assert.NoError(t, got, tc.name)
			continue
		}
		assert.ErrorIs(t, got, tc.want, tc.name)
		assert.Equal(t, !tc.wantOther, errors.Is(got, ErrProtocol), "%s: %v", tc.name, got)
	}
}
