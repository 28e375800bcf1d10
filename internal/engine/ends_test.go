package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/spipe-dev/spipe/pkg/spipe"
	"github.com/spipe-dev/spipe/pkg/spipe/mux"
)

// TestEndOf: a side that leaves (however the socket reports it) and the
// shutdown are ends; what an operator must act on is a failure.
func TestEndOf(t *testing.T) {
	// The errors as the pipe meets them: socket errors inside the
	// library's and the net package's wrapping, inside a TransferError.
	opErr := func(op string, errno error) error {
		return &net.OpError{Op: op, Net: "tcp", Err: &net.OpError{Op: op, Err: errno}}
	}
	onSide := func(side, op string, err error) error { return &TransferError{Side: side, Op: op, Err: err} }
	for _, tc := range []struct {
		err error
		how string // "" for a failure
	}{
		{nil, "closed"},
		{errShutdown, "shutdown"},
		{errShutdownOf(io.EOF), "shutdown"},
		{&cutError{cause: errShutdown, err: net.ErrClosed}, "shutdown"},
		{onSide("client", "read", opErr("read", syscall.ECONNRESET)), "reset"},
		{onSide("target", "read", fmt.Errorf("spipe: read: %w", opErr("read", syscall.ECONNRESET))), "reset"},
		{onSide("client", "write", opErr("write", syscall.EPIPE)), "reset"},
		{onSide("target", "close-write", opErr("shutdown", syscall.ENOTCONN)), "reset"},
		{onSide("client", "read", syscall.ECONNRESET), "reset"}, // resetAfterEOF's verdict
		{onSide("target", "read", mux.ErrStreamReset), "reset"},
		{onSide("client", "write", io.ErrClosedPipe), "reset"}, // stdio: the reader left
		{onSide("client", "read", fmt.Errorf("spipe: read: %w", spipe.ErrTruncated)), ""},
		{onSide("client", "read", fmt.Errorf("spipe: read: frame 3: %w", spipe.ErrTampered)), ""},
		{onSide("target", "read", mux.ErrSessionClosed), ""},
		{errIdle, ""},
		{onSide("client", "write", net.ErrClosed), ""},
		{errors.New("something else"), ""},
	} {
		how, ok := endOf(tc.err)
		assert.Equal(t, tc.how, how, "%v", tc.err)
		assert.Equal(t, tc.how != "", ok, "%v", tc.err)
	}
}

// TestPipeCause: of the errors both directions and the watchers report,
// the pipe's cause is the first that is not an echo of a close, and a
// truncation gives way to the same side's reset reported after it.
func TestPipeCause(t *testing.T) {
	echo := &TransferError{Side: "client", Op: "write", Err: fmt.Errorf("spipe: write: %w", net.ErrClosed)}
	reset := &TransferError{Side: "client", Op: "read", Err: syscall.ECONNRESET}
	writeReset := &TransferError{Side: "client", Op: "write", Err: syscall.ECONNRESET}
	truncated := &TransferError{Side: "client", Op: "read", Err: fmt.Errorf("spipe: read: %w", spipe.ErrTruncated)}
	stdoutGone := &TransferError{Side: "target", Op: "write", Err: io.ErrClosedPipe}
	for _, tc := range []struct {
		name   string
		errs   []error
		cause  error
		reason string
	}{
		{"nothing failed", nil, nil, ""},
		// The curl-to-a-dead-target case: the write met the socket the
		// failed read had closed, and reported first.
		{"echo before its cause", []error{echo, reset}, reset, "reset"},
		{"the write took the reset", []error{truncated, writeReset}, writeReset, "reset"},
		{"a truncation and a reset elsewhere", []error{truncated, stdoutGone}, truncated, "truncated"},
		{"idle, then the closes it made", []error{errIdle, echo}, errIdle, "idle"},
		{"only echoes", []error{echo}, echo, "other"},
	} {
		a := &aborter{errs: tc.errs}
		assert.Equal(t, tc.cause, a.err(), tc.name)
		assert.Equal(t, tc.reason, Reason(a.err()), tc.name)
	}
}

// TestShutdownIsAnEnd: a connection whose context ends before its
// transfer (cut in its dial, say) ended with the shutdown; it is not
// counted as a failure of its stage.
func TestShutdownIsAnEnd(t *testing.T) {
	obs := newOutcomes()
	f := &Forwarder{Observer: obs}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := f.failedBeforeTransfer(ctx, nil, stageDial, context.Canceled, nil, time.Now(), true)
	assert.Equal(t, "shutdown", Reason(err))
	assert.Equal(t, map[string]int{"end:shutdown": 1}, obs.snapshot())
}

// outcomes is an Observer that counts how connections ended: "end:HOW"
// for ends, "STAGE:REASON" for failures; and how many wait for a place.
type outcomes struct {
	nopObserver
	mu      sync.Mutex
	counts  map[string]int
	waiting int
}

func newOutcomes() *outcomes { return &outcomes{counts: map[string]int{}} }

func (o *outcomes) add(key string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.counts[key]++
}

func (o *outcomes) Handshake(_ time.Duration, err error) {
	if err != nil {
		o.add("handshake:" + Reason(err))
	}
}
func (o *outcomes) DialError(err error)      { o.add("dial:" + Reason(err)) }
func (o *outcomes) AdmissionError(err error) { o.add("admission:" + Reason(err)) }
func (o *outcomes) TransferError(err error)  { o.add("transfer:" + Reason(err)) }
func (o *outcomes) CarrierFailed(err error)  { o.add("carrier:" + Reason(err)) }
func (o *outcomes) Ended(how string)         { o.add("end:" + how) }

func (o *outcomes) Waiting(delta int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.waiting += delta
}

func (o *outcomes) snapshot() map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return maps.Clone(o.counts)
}

func (o *outcomes) waiters() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.waiting
}
