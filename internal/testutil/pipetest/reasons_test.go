package pipetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestUnlisted: of a metrics page's end and failure series, those whose
// reason (or how, or stage) the engine does not list are named; the rest
// of the page is not looked at.
func TestUnlisted(t *testing.T) {
	page := `spipe_connection_ends_total{how="reset",mode="listen"} 3
spipe_connection_ends_total{how="vanished",mode="listen"} 1
spipe_admission_failures_total{mode="listen",reason="limit"} 2
spipe_admission_failures_total{mode="listen",reason="reset"} 1
spipe_dial_failures_total{mode="connect",reason="truncated"} 1
spipe_frame_errors_total{mode="listen",reason="carrier"} 1
spipe_carrier_open_failures_total{mode="connect",reason="truncated",stage="handshake"} 4
spipe_carrier_open_failures_total{mode="connect",reason="truncated",stage="dial"} 1
spipe_bytes_total{direction="to_target",mode="listen"} 10
`
	assert.Equal(t, []string{
		`spipe_connection_ends_total{how="vanished",mode="listen"}`,
		`spipe_admission_failures_total{mode="listen",reason="reset"}`,
		`spipe_dial_failures_total{mode="connect",reason="truncated"}`,
		`spipe_frame_errors_total{mode="listen",reason="carrier"}`,
		`spipe_carrier_open_failures_total{mode="connect",reason="truncated",stage="dial"}`,
	}, Unlisted(page))
}
