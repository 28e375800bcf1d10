package testutil

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Log collects log lines (of an in-process service, or a process's
// stderr) while a test reads them. It is safe for concurrent use.
type Log struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Count returns how many lines contain every one of subs.
func (l *Log) Count(subs ...string) int {
	n := 0
	for line := range strings.SplitSeq(l.String(), "\n") {
		ok := line != ""
		for _, s := range subs {
			ok = ok && strings.Contains(line, s)
		}
		if ok {
			n++
		}
	}
	return n
}

// WaitCount waits until at least n lines contain all of subs, failing the
// test after within.
func (l *Log) WaitCount(t testing.TB, n int, within time.Duration, subs ...string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for l.Count(subs...) < n {
		if time.Now().After(deadline) {
			t.Fatalf("want %d log lines with %q, have %d; log:\n%s", n, subs, l.Count(subs...), Tail(l.String(), 40))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Wait waits up to 10 s for the log to match the regular expression re
// and returns its last submatch (the whole match if it has none). done,
// if not nil, says the writer has gone: the log is checked once more and
// the test fails at once.
func (l *Log) Wait(t testing.TB, re string, done <-chan struct{}) string {
	t.Helper()
	rx := regexp.MustCompile(re)
	match := func() (string, bool) {
		if m := rx.FindStringSubmatch(l.String()); m != nil {
			return m[len(m)-1], true
		}
		return "", false
	}
	deadline := time.After(10 * time.Second)
	for {
		if s, ok := match(); ok {
			return s
		}
		select {
		case <-done:
			if s, ok := match(); ok {
				return s
			}
			t.Fatalf("the writer ended before logging %q; log:\n%s", re, l.String())
		case <-deadline:
			t.Fatalf("nothing logged %q; log:\n%s", re, Tail(l.String(), 40))
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Tail returns the last lines of s.
func Tail(s string, lines int) string {
	l := strings.Split(s, "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}
