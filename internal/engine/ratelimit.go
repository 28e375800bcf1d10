package engine

import (
	"net"
	"sync"
	"time"
)

// Failure lines of one stage from one source address: at most
// failureLineBurst per failureLineWindow, for at most failureLineSources
// (stage, source) pairs tracked at once (beyond that, the rest share one
// allowance).
const (
	failureLineBurst   = 5
	failureLineWindow  = time.Minute
	failureLineSources = 4096
)

// lineLimiter lets through at most burst lines per source in each window
// and counts the lines it holds back, so the next line let through can
// say how many were suppressed. Metrics count every failure regardless.
type lineLimiter struct {
	burst  int
	window time.Duration
	max    int
	now    func() time.Time

	mu      sync.Mutex
	sources map[string]*lineCount
}

type lineCount struct {
	start      time.Time // of the current window
	lines      int       // let through in it
	suppressed int       // held back since the last line let through
}

func newLineLimiter(burst int, window time.Duration, max int) *lineLimiter {
	return &lineLimiter{burst: burst, window: window, max: max, now: time.Now, sources: map[string]*lineCount{}}
}

// allow reports whether a line from source may be written and, if so, how
// many lines from it were held back before it.
func (l *lineLimiter) allow(source string) (ok bool, suppressed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	c := l.sources[source]
	if c == nil {
		if len(l.sources) >= l.max {
			l.sweep(now)
		}
		if len(l.sources) >= l.max {
			source = "" // the shared allowance of the sources beyond max
			c = l.sources[source]
		}
		if c == nil {
			c = &lineCount{start: now}
			l.sources[source] = c
		}
	}
	if now.Sub(c.start) >= l.window {
		c.start, c.lines = now, 0
	}
	if c.lines >= l.burst {
		c.suppressed++
		return false, 0
	}
	c.lines++
	suppressed, c.suppressed = c.suppressed, 0
	return true, suppressed
}

// sweep forgets the sources whose window is over. What they held back is
// forgotten with them: the metrics still counted it.
func (l *lineLimiter) sweep(now time.Time) {
	for s, c := range l.sources {
		if now.Sub(c.start) >= l.window {
			delete(l.sources, s)
		}
	}
}

// failureLines returns the Forwarder's limiter of failure lines, made on
// first use. Its sources are a stage and a source address: a flood of
// failing handshakes from an address does not hide that a connection it
// made failed later, in its transfer.
func (f *Forwarder) failureLines() *lineLimiter {
	f.linesOnce.Do(func() {
		f.lines = newLineLimiter(failureLineBurst, failureLineWindow, failureLineSources)
	})
	return f.lines
}

// lineSource names the source a peer address's lines count against: the
// admission table's notion of a source for a TCP peer (its IPv4 address,
// or its IPv6 /64, whatever its port), the address itself otherwise.
func lineSource(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return sourceOfIP(ta.AddrPort().Addr()).String()
	}
	return addrString(a)
}
