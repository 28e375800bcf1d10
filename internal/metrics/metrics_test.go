package metrics

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	errTampered = errors.New("tampered")
	errRefused  = errors.New("refused")
)

// newTest returns metrics whose classifier knows two errors, one of them a
// frame error.
func newTest() *Metrics {
	classify := func(err error) string {
		switch {
		case errors.Is(err, errTampered):
			return "tampered"
		case errors.Is(err, errRefused):
			return "refused"
		}
		return "other"
	}
	return New(Config{
		Mode:         "listen",
		Classify:     classify,
		IsFrameError: func(err error) bool { return errors.Is(err, errTampered) },
		Reasons: Reasons{
			Handshake:   []string{"auth", "timeout"},
			Dial:        []string{"refused"},
			Admission:   []string{"limit"},
			Transfer:    []string{"tampered", "idle"},
			Frame:       []string{"tampered"},
			Carrier:     []string{"mux_protocol"},
			CarrierOpen: map[string][]string{"dial": {"refused"}, "handshake": {"auth"}},
			Ends:        []string{"closed", "reset"},
		},
		Build: map[string]string{"version": "v1.2.3", "revision": "abc"},
	})
}

// TestFailureSeriesStartAtZero: every reason the configuration names has
// its series before anything failed, so an alert on a rate sees it.
func TestFailureSeriesStartAtZero(t *testing.T) {
	body := gather(t, newTest())
	for _, series := range []string{
		`spipe_handshake_failures_total{mode="listen",reason="auth"}`,
		`spipe_handshake_failures_total{mode="listen",reason="timeout"}`,
		`spipe_dial_failures_total{mode="listen",reason="refused"}`,
		`spipe_transfer_failures_total{mode="listen",reason="tampered"}`,
		`spipe_transfer_failures_total{mode="listen",reason="idle"}`,
		`spipe_frame_errors_total{mode="listen",reason="tampered"}`,
		`spipe_admission_failures_total{mode="listen",reason="limit"}`,
		`spipe_carrier_failures_total{mode="listen",reason="mux_protocol"}`,
		`spipe_carrier_open_failures_total{mode="listen",reason="refused",stage="dial"}`,
		`spipe_carrier_open_failures_total{mode="listen",reason="auth",stage="handshake"}`,
		`spipe_connection_ends_total{how="closed",mode="listen"}`,
		`spipe_connection_ends_total{how="reset",mode="listen"}`,
		`spipe_connections_waiting{mode="listen"}`,
		`spipe_key_reloads_total{mode="listen",result="success"}`,
		`spipe_key_reloads_total{mode="listen",result="failure"}`,
	} {
		assertSeries(t, body, series, "0")
	}
	assertSeries(t, body, `spipe_build_info{mode="listen",revision="abc",version="v1.2.3"}`, "1")
}

func TestDialFailuresAndKeyReloads(t *testing.T) {
	m := newTest()
	m.DialError(errRefused)
	m.DialError(errRefused)
	m.DialError(errors.New("no route"))
	m.KeyReload(true)
	m.KeyReload(false)
	m.KeyReload(true)
	body := gather(t, m)
	assertSeries(t, body, `spipe_dial_failures_total{mode="listen",reason="refused"}`, "2")
	assertSeries(t, body, `spipe_dial_failures_total{mode="listen",reason="other"}`, "1")
	assertSeries(t, body, `spipe_key_reloads_total{mode="listen",result="success"}`, "2")
	assertSeries(t, body, `spipe_key_reloads_total{mode="listen",result="failure"}`, "1")
}

// TestCarrierOpenFailures: carriers that could not be opened count by
// stage and reason, in a series of their own: not as connections.
func TestCarrierOpenFailures(t *testing.T) {
	m := newTest()
	m.CarrierOpenFailed("dial", errRefused)
	m.CarrierOpenFailed("dial", errRefused)
	m.CarrierOpenFailed("handshake", errors.New("refused by the server"))
	body := gather(t, m)
	assertSeries(t, body, `spipe_carrier_open_failures_total{mode="listen",reason="refused",stage="dial"}`, "2")
	assertSeries(t, body, `spipe_carrier_open_failures_total{mode="listen",reason="other",stage="handshake"}`, "1")
	assertSeries(t, body, `spipe_handshake_failures_total{mode="listen",reason="auth"}`, "0")
	assertSeries(t, body, `spipe_connections_total{mode="listen"}`, "0")
}

func TestConnectionsOpenAndTotal(t *testing.T) {
	m := newTest()
	m.ConnOpened()
	m.ConnOpened()
	m.ConnOpened()
	m.ConnClosed()
	body := gather(t, m)
	assertSeries(t, body, `spipe_connections_open{mode="listen"}`, "2")
	assertSeries(t, body, `spipe_connections_total{mode="listen"}`, "3")
}

func TestBytesByDirection(t *testing.T) {
	m := newTest()
	m.Bytes(true, 100)
	m.Bytes(true, 23)
	m.Bytes(false, 7)
	body := gather(t, m)
	assertSeries(t, body, `spipe_bytes_total{direction="to_target",mode="listen"}`, "123")
	assertSeries(t, body, `spipe_bytes_total{direction="from_target",mode="listen"}`, "7")
}

func TestHandshakeOutcomes(t *testing.T) {
	m := newTest()
	m.Handshake(3*time.Millisecond, nil)
	m.Handshake(5*time.Millisecond, nil)
	m.Handshake(time.Second, errRefused)
	body := gather(t, m)
	assertSeries(t, body, `spipe_handshake_failures_total{mode="listen",reason="refused"}`, "1")
	// A failed handshake's duration is not a handshake latency: two
	// observations, 8 ms in all.
	assertSeries(t, body, `spipe_handshake_duration_seconds_count{mode="listen"}`, "2")
	assertSeries(t, body, `spipe_handshake_duration_seconds_sum{mode="listen"}`, "0.008")
	// Buckets grow by 2.5 from 100 µs: 3 ms falls in the one ending at
	// 3.9 ms, 5 ms in the next.
	assertSeries(t, body, `spipe_handshake_duration_seconds_bucket{mode="listen",le="0.0015625"}`, "0")
	assertSeries(t, body, `spipe_handshake_duration_seconds_bucket{mode="listen",le="0.00390625"}`, "1")
	assertSeries(t, body, `spipe_handshake_duration_seconds_bucket{mode="listen",le="0.009765625"}`, "2")
}

func TestTransferErrorsAndFrameErrors(t *testing.T) {
	m := newTest()
	m.TransferError(errTampered)
	m.TransferError(errTampered)
	m.TransferError(errRefused)
	body := gather(t, m)
	assertSeries(t, body, `spipe_transfer_failures_total{mode="listen",reason="tampered"}`, "2")
	assertSeries(t, body, `spipe_transfer_failures_total{mode="listen",reason="refused"}`, "1")
	assertSeries(t, body, `spipe_frame_errors_total{mode="listen",reason="tampered"}`, "2")
	// Only errors the protocol raised about frames count as frame errors.
	assert.NotContains(t, body, `spipe_frame_errors_total{mode="listen",reason="refused"}`)
}

// TestEndsApartFromFailures: an end is counted by how, in its own
// series, and touches no failure series; waiting connections are a gauge;
// a limit and a carrier failure have series of their own (a carrier's
// rejected frame is a frame error too).
func TestEndsApartFromFailures(t *testing.T) {
	m := newTest()
	m.Ended("reset")
	m.Ended("reset")
	m.Ended("closed")
	m.Waiting(1)
	m.Waiting(1)
	m.Waiting(-1)
	m.AdmissionError(errRefused)
	m.CarrierFailed(errTampered)
	body := gather(t, m)
	assertSeries(t, body, `spipe_connection_ends_total{how="reset",mode="listen"}`, "2")
	assertSeries(t, body, `spipe_connection_ends_total{how="closed",mode="listen"}`, "1")
	assertSeries(t, body, `spipe_connections_waiting{mode="listen"}`, "1")
	assertSeries(t, body, `spipe_admission_failures_total{mode="listen",reason="refused"}`, "1")
	assertSeries(t, body, `spipe_carrier_failures_total{mode="listen",reason="tampered"}`, "1")
	assertSeries(t, body, `spipe_transfer_failures_total{mode="listen",reason="tampered"}`, "0")
	assertSeries(t, body, `spipe_frame_errors_total{mode="listen",reason="tampered"}`, "1")
}

// assertSeries checks that the scrape has the series with the value.
func assertSeries(t *testing.T, body, series, value string) {
	t.Helper()
	want := series + " " + value
	for _, line := range strings.Split(body, "\n") {
		if line == want {
			return
		}
		if strings.HasPrefix(line, series+" ") {
			assert.Fail(t, "wrong value", "have %q, want %q", line, want)
			return
		}
	}
	assert.Fail(t, "series missing", "no %q in the scrape", series)
}

// gather renders the registry in the text format, as a scrape sees it.
func gather(t *testing.T, m *Metrics) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- m.Serve(ctx, ln, nil, nil) }()
	defer func() {
		cancel()
		assert.NoError(t, <-served, "Serve after its context ended")
	}()
	resp, err := http.Get("http://" + ln.Addr().String() + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

func TestServeExportsEveryMetricWithItsMode(t *testing.T) {
	m := newTest()
	m.ConnOpened()
	m.Bytes(true, 1)
	m.Bytes(false, 1)
	m.Handshake(time.Millisecond, nil)
	m.Handshake(0, errRefused)
	m.TransferError(errTampered)
	m.DialError(errRefused)
	m.KeyReload(true)
	body := gather(t, m)
	for _, series := range []string{
		`spipe_connections_open{mode="listen"} 1`,
		`spipe_connections_total{mode="listen"} 1`,
		`spipe_bytes_total{direction="to_target",mode="listen"} 1`,
		`spipe_bytes_total{direction="from_target",mode="listen"} 1`,
		`spipe_handshake_failures_total{mode="listen",reason="refused"} 1`,
		`spipe_transfer_failures_total{mode="listen",reason="tampered"} 1`,
		`spipe_frame_errors_total{mode="listen",reason="tampered"} 1`,
		`spipe_dial_failures_total{mode="listen",reason="refused"} 1`,
		`spipe_key_reloads_total{mode="listen",result="success"} 1`,
		`spipe_build_info{mode="listen",revision="abc",version="v1.2.3"} 1`,
		`spipe_handshake_duration_seconds_count{mode="listen"} 1`,
		"go_goroutines ",
		"process_cpu_seconds_total ",
	} {
		assert.Contains(t, body, series)
	}
}

func TestServeReportsListenerFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln.Close()
	assert.Error(t, newTest().Serve(context.Background(), ln, nil, nil))
}

func TestMetricsAreIndependent(t *testing.T) {
	// Each Metrics has its own registry: two in one process do not clash
	// or share counts.
	a, b := newTest(), newTest()
	a.ConnOpened()
	assertSeries(t, gather(t, a), `spipe_connections_total{mode="listen"}`, "1")
	assertSeries(t, gather(t, b), `spipe_connections_total{mode="listen"}`, "0")
}

// TestHealthz: 200 until the service drains, 503 from then on; GET and
// HEAD only, never cached; other paths stay 404.
func TestHealthz(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	draining := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- newTest().Serve(ctx, ln, nil, draining) }()
	defer func() { cancel(); assert.NoError(t, <-served) }()
	base := "http://" + ln.Addr().String()
	get := func(method, path string) (int, string, http.Header) {
		req, err := http.NewRequest(method, base+path, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b), resp.Header
	}
	code, body, h := get("GET", "/healthz")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok\n", body)
	assert.Equal(t, "no-store", h.Get("Cache-Control"))
	code, body, _ = get("HEAD", "/healthz")
	assert.Equal(t, http.StatusOK, code)
	assert.Empty(t, body)
	code, _, _ = get("POST", "/healthz")
	assert.Equal(t, http.StatusMethodNotAllowed, code)
	code, _, _ = get("GET", "/")
	assert.Equal(t, http.StatusNotFound, code)

	close(draining)
	code, body, _ = get("GET", "/healthz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "shutting down\n", body)
	code, _, _ = get("GET", "/metrics")
	assert.Equal(t, http.StatusOK, code, "metrics are still served while draining")
}
