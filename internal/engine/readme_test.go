package engine

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/spipe-dev/spipe/internal/testutil"
)

// TestREADMEReasonTable: the README's table of ends and failures lists
// exactly the engine's: every end and every reason of every failure
// series, each with the level of its line on each side, so that the two
// cannot drift apart. (internal/service checks the series names against
// what the metrics export.)
func TestREADMEReasonTable(t *testing.T) {
	in := &Forwarder{SecureSide: SecureInbound}
	out := &Forwarder{SecureSide: SecureOutbound}
	// Only a listener has an admission table, trusts balancers and accepts
	// carriers; only a connect opens them.
	listenOnly := []string{reasonEvicted, reasonHelloTimeout, reasonProxyHeader, reasonCarrierLimit}
	connectOnly := []string{reasonNoCarrier}
	const frames = "spipe_frame_errors_total"
	r := Reasons()
	var want []string
	for _, how := range r.Ends {
		want = append(want, strings.Join([]string{"spipe_connection_ends_total", how, in.endLevel(nil).String(), out.endLevel(nil).String()}, " | "))
	}
	for _, set := range []struct {
		series, stage string
		reasons       []string
		frames        bool // its frame errors count in the frame series too
	}{
		{"spipe_handshake_failures_total", stageHandshake, r.Handshake, false},
		{"spipe_dial_failures_total", stageDial, r.Dial, false},
		{"spipe_admission_failures_total", stageAdmission, r.Admission, false},
		{"spipe_transfer_failures_total", stageTransfer, r.Transfer, true},
		{"spipe_carrier_failures_total", stageCarrier, r.Carrier, true},
	} {
		for _, reason := range set.reasons {
			series := set.series
			if set.frames && slices.Contains(r.Frame, reason) {
				series += ", " + frames
			}
			listen, connect := in.failureLevel(set.stage, reason).String(), out.failureLevel(set.stage, reason).String()
			if slices.Contains(listenOnly, reason) {
				connect = "–"
			}
			if slices.Contains(connectOnly, reason) {
				listen = "–"
			}
			want = append(want, strings.Join([]string{series, reason, listen, connect}, " | "))
		}
	}
	for _, stage := range []string{stageDial, stageHandshake} {
		for _, reason := range r.CarrierOpen[stage] {
			series := `spipe_carrier_open_failures_total{stage="` + stage + `"}`
			want = append(want, strings.Join([]string{series, reason, "–", carrierOpenLevel.String()}, " | "))
		}
	}
	assert.ElementsMatch(t, []string{stageDial, stageHandshake}, slices.Collect(maps.Keys(r.CarrierOpen)))
	var got []string
	for _, row := range testutil.MarkdownTable(t, "../../README.md", "TestREADMEReasonTable") {
		if assert.Len(t, row, 5, "%q", row) {
			assert.NotEmpty(t, row[4], "%q says nothing of what happened", row[1])
			got = append(got, strings.Join(row[:4], " | "))
		}
	}
	assert.ElementsMatch(t, want, got, "README.md's table (series | reason | listen | connect) against the engine")
}
