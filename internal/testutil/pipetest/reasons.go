package pipetest

import (
	"io"
	"net/http"
	"regexp"
	"slices"
	"testing"

	"github.com/spipe-dev/spipe/internal/engine"
)

// Unlisted returns the end and failure series on a metrics page whose
// reason (or how) the engine does not list (engine.Reasons, which
// README.md's table has a row for each of): a series the metrics made
// for a reason met outside the lists.
func Unlisted(body string) []string {
	r := engine.Reasons()
	sets := map[string][]string{
		"spipe_connection_ends_total":    r.Ends,
		"spipe_handshake_failures_total": r.Handshake,
		"spipe_dial_failures_total":      r.Dial,
		"spipe_admission_failures_total": r.Admission,
		"spipe_transfer_failures_total":  r.Transfer,
		"spipe_frame_errors_total":       r.Frame,
		"spipe_carrier_failures_total":   r.Carrier,
	}
	var out []string
	for _, m := range seriesLine.FindAllStringSubmatch(body, -1) {
		name, labels := m[1], m[2]
		set, ok := sets[name]
		if name == "spipe_carrier_open_failures_total" {
			set, ok = r.CarrierOpen[label(labels, "stage")], true
		}
		if !ok {
			continue
		}
		reason := label(labels, "reason")
		if name == "spipe_connection_ends_total" {
			reason = label(labels, "how")
		}
		if !slices.Contains(set, reason) {
			out = append(out, name+"{"+labels+"}")
		}
	}
	return out
}

var seriesLine = regexp.MustCompile(`(?m)^(spipe_\w+)\{([^}]*)\} `)

// label returns a label's value from a series' labels.
func label(labels, name string) string {
	m := regexp.MustCompile(`(?:^|,)` + name + `="([^"]*)"`).FindStringSubmatch(labels)
	if m == nil {
		return ""
	}
	return m[1]
}

// checkReasons fails the test if the service's metrics (if it serves
// any, and they still answer) count an end or failure under a reason the
// engine does not list.
func (s *Service) checkReasons(t testing.TB) {
	t.Helper()
	addr := s.Svc.MetricsAddr()
	if addr == nil {
		return
	}
	resp, err := http.Get("http://" + addr.String() + "/metrics")
	if err != nil {
		return // already stopped: Run's caller checks what it needs
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return
	}
	for _, series := range Unlisted(string(body)) {
		t.Errorf("%s: a reason the engine does not list (engine.Reasons, README.md's table)", series)
	}
}
