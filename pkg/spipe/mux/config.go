package mux

import (
	"fmt"
	"time"
)

// Defaults of a Config that sets nothing.
const (
	// DefaultMaxStreams is how many streams a session accepts open at
	// once by default.
	DefaultMaxStreams = 1000
	// MinStreamWindow is the window every stream starts with in each
	// direction (docs/PROTOCOL.md 7.3: 256 KiB, fixed by the protocol),
	// and the smallest MaxStreamWindow.
	MinStreamWindow = 256 << 10
	// DefaultKeepAlive is how often a session pings its peer by default.
	DefaultKeepAlive = 30 * time.Second
)

const (
	// defaultMaxStreamWindow is MaxStreamWindow when the Config sets none.
	defaultMaxStreamWindow = 4 << 20
	// maxStreamWindowLimit bounds MaxStreamWindow: a credit's increment is
	// at most 2^32-1 bytes, and no stream needs more than this.
	maxStreamWindowLimit = 1 << 30
	// growthBudgets is how many MaxStreamWindows the windows of a
	// session's streams may grow beyond MinStreamWindow in all.
	growthBudgets = 4
)

// pongWait is how long a ping may go unanswered before the session counts
// its peer as gone (a variable for the tests).
var pongWait = 10 * time.Second

// Config tunes a session. Nothing in it must match the peer's: each side
// limits only what it accepts. The zero value (or nil) is the defaults.
type Config struct {
	// MaxStreams caps the streams a server holds open at once; an open
	// beyond it is refused (reset, with the code that tells the client
	// the server did nothing for it). 0 means DefaultMaxStreams. A stream
	// holds its place until it has closed and its data has been read, or
	// it was reset. A client opens as many as it likes: the server's
	// limit applies.
	MaxStreams int

	// MaxStreamWindow is the most one stream may have in flight toward
	// this side, in bytes: its receive window starts at MinStreamWindow
	// (256 KiB) and doubles, up to this, while its reader keeps up with a
	// sender that is short of window and no other stream of the session
	// receives data; all of a session's streams together grow by at most
	// four times this. 0 means 4 MiB; MinStreamWindow turns growth off.
	// While several streams take turns receiving data, each gets no more
	// than 64 KiB in flight (and writers send frames of at most 16 KiB),
	// so that none waits behind much of another's. What a session holds
	// unread is at most MaxStreams times MinStreamWindow, plus four times
	// MaxStreamWindow.
	MaxStreamWindow int

	// KeepAlive is how often a session pings its peer; a ping unanswered
	// within 10 s ends the session (a dead carrier, or a peer that stopped
	// reading, is noticed and its streams fail). 0 means
	// DefaultKeepAlive; negative turns the pings off.
	KeepAlive time.Duration
}

// settings is a validated Config with its defaults.
type settings struct {
	maxStreams   int
	maxWindow    int
	growthBudget int64
	keepAlive    time.Duration // 0: none
}

func (c *Config) settings() (settings, error) {
	if c == nil {
		c = &Config{}
	}
	s := settings{maxStreams: c.MaxStreams, maxWindow: c.MaxStreamWindow, keepAlive: c.KeepAlive}
	switch {
	case s.maxStreams < 0:
		return s, fmt.Errorf("spipe/mux: MaxStreams %d is negative", s.maxStreams)
	case s.maxStreams == 0:
		s.maxStreams = DefaultMaxStreams
	}
	switch {
	case s.maxWindow == 0:
		s.maxWindow = defaultMaxStreamWindow
	case s.maxWindow < MinStreamWindow || s.maxWindow > maxStreamWindowLimit:
		return s, fmt.Errorf("spipe/mux: MaxStreamWindow %d outside %d..%d", s.maxWindow, MinStreamWindow, maxStreamWindowLimit)
	}
	s.growthBudget = growthBudgets * int64(s.maxWindow)
	switch {
	case s.keepAlive < 0:
		s.keepAlive = 0
	case s.keepAlive == 0:
		s.keepAlive = DefaultKeepAlive
	}
	return s, nil
}
