package mux

import (
	"sync"
	"time"
)

// deadline is one direction's deadline of a stream, as net.Conn's
// SetReadDeadline and SetWriteDeadline set it: wait returns a channel
// that is closed once the deadline has passed. Setting one costs a timer;
// waiting costs nothing more, so streams without deadlines pay nothing.
type deadline struct {
	mu     sync.Mutex
	timer  *time.Timer
	cancel chan struct{} // closed when the deadline passes; nil: none set yet
}

// set arms the deadline at t; the zero time removes it.
func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil && !d.timer.Stop() {
		<-d.cancel // the timer fired: wait for it to have closed cancel
	}
	d.timer = nil
	closed := d.cancel != nil && isClosed(d.cancel)
	if t.IsZero() {
		if closed {
			d.cancel = make(chan struct{})
		}
		return
	}
	if dur := time.Until(t); dur > 0 {
		if closed || d.cancel == nil {
			d.cancel = make(chan struct{})
		}
		cancel := d.cancel
		d.timer = time.AfterFunc(dur, func() { close(cancel) })
		return
	}
	if d.cancel == nil {
		d.cancel = make(chan struct{})
	}
	if !closed {
		close(d.cancel)
	}
}

// wait returns a channel closed once the deadline has passed (nil, which
// blocks forever, while none is set).
func (d *deadline) wait() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cancel
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
