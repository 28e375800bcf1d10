package engine

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestMain runs the tests, or, in a child process a test started, that
// child's part. Every Observer the engine reports to in the tests is
// checked for reasons the ReasonSets do not list (README.md's table has a
// row for every one they list, TestREADMEReasonTable): a reason reported
// outside them, whatever test met it, fails the run.
func TestMain(m *testing.M) {
	if os.Getenv("SPIPE_SYSTEMD_CHILD") == "1" {
		if err := systemdChild(); err != nil {
			fmt.Println("systemd child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	wrapObserver = func(o Observer) Observer { return listedOnly{o} }
	code := m.Run()
	if u := unlisted.report(); len(u) > 0 {
		fmt.Println("reasons reported that the engine's ReasonSets (and README.md's table) do not list:")
		for _, s := range u {
			fmt.Println("  ", s)
		}
		code = 1
	}
	os.Exit(code)
}

// listedOnly passes every event on to its Observer and records each
// reason reported that Reasons does not list for its series.
type listedOnly struct{ Observer }

func (o listedOnly) Handshake(d time.Duration, err error) {
	if err != nil {
		unlisted.check("handshake", Reason(err), Reasons().Handshake)
	}
	o.Observer.Handshake(d, err)
}

func (o listedOnly) DialError(err error) {
	unlisted.check("dial", Reason(err), Reasons().Dial)
	o.Observer.DialError(err)
}

func (o listedOnly) AdmissionError(err error) {
	unlisted.check("admission", Reason(err), Reasons().Admission)
	o.Observer.AdmissionError(err)
}

func (o listedOnly) TransferError(err error) {
	unlisted.check("transfer", Reason(err), Reasons().Transfer)
	o.Observer.TransferError(err)
}

func (o listedOnly) CarrierFailed(err error) {
	unlisted.check("carrier", Reason(err), Reasons().Carrier)
	o.Observer.CarrierFailed(err)
}

func (o listedOnly) CarrierOpenFailed(stage string, err error) {
	unlisted.check("carrier_open "+stage, Reason(err), Reasons().CarrierOpen[stage])
	o.Observer.CarrierOpenFailed(stage, err)
}

func (o listedOnly) Ended(how string) {
	unlisted.check("end", how, Reasons().Ends)
	o.Observer.Ended(how)
}

// unlisted holds the reasons reported outside the lists, by series.
var unlisted = &reasonLog{seen: map[string]int{}}

type reasonLog struct {
	mu   sync.Mutex
	seen map[string]int
}

func (l *reasonLog) check(series, reason string, listed []string) {
	if slices.Contains(listed, reason) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen[series+" "+reason]++
}

func (l *reasonLog) report() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, k := range slices.Sorted(maps.Keys(l.seen)) {
		out = append(out, fmt.Sprintf("%s (%d times)", k, l.seen[k]))
	}
	return out
}
