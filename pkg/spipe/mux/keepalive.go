package mux

import (
	"sync"
	"time"
)

// keepalive pings the peer every KeepAlive and ends the session when a
// ping goes unanswered for pongWait (docs/PROTOCOL.md 7.5): a peer that
// is gone, or has stopped reading, is noticed within KeepAlive +
// pongWait. The opaque values count up from 1.
type keepalive struct {
	s           *Session
	mu          sync.Mutex
	timer       *time.Timer
	outstanding bool      // a ping is waiting for its pong
	sentAt      time.Time // when it was queued
	last        uint64    // its value
	stopped     bool
}

// goAwayOnTimeout bounds how long a session whose ping went unanswered
// waits for its go-away (code internal error) to leave: a peer that does
// not read may never take it.
const goAwayOnTimeout = 100 * time.Millisecond

func (k *keepalive) start(s *Session) {
	k.s = s
	if s.cfg.keepAlive > 0 {
		k.mu.Lock()
		k.timer = time.AfterFunc(s.cfg.keepAlive, k.tick)
		k.mu.Unlock()
	}
}

// tick pings, or checks the outstanding ping's answer.
func (k *keepalive) tick() {
	k.mu.Lock()
	if k.stopped {
		k.mu.Unlock()
		return
	}
	if k.outstanding {
		if waited := time.Since(k.sentAt); waited < pongWait {
			k.timer.Reset(pongWait - waited)
			k.mu.Unlock()
			return
		}
		k.mu.Unlock()
		k.s.fail(goAwayInternalError, timeoutErr(), goAwayOnTimeout)
		return
	}
	k.pingLocked()
	k.timer.Reset(min(pongWait, k.s.cfg.keepAlive))
	k.mu.Unlock()
}

// pingLocked queues a ping with the next value. k.mu is held.
func (k *keepalive) pingLocked() {
	k.last++
	k.outstanding, k.sentAt = true, time.Now()
	k.s.ctl.queue(control1{typ: pingItem, f: streamFrame{opaque: k.last}})
}

// pong takes a pong in: the answer to the outstanding ping clears it, and
// the next ping is due KeepAlive after the last.
func (k *keepalive) pong(v uint64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.outstanding || v != k.last {
		return // answers no ping of ours
	}
	k.outstanding = false
	if k.timer != nil && !k.stopped {
		k.timer.Reset(max(0, k.s.cfg.keepAlive-time.Since(k.sentAt)))
	}
}

func (k *keepalive) stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.stopped = true
	if k.timer != nil {
		k.timer.Stop()
	}
}
