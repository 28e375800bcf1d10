// Package metrics exports the spipe tool's counters in the Prometheus
// format: connections (and streams) open, waiting for a place and total,
// how they ended, multiplexed carriers (and those that could not be
// opened), bytes each way, failures by stage and reason, frame errors,
// handshake latency, key reloads and the build; and a health check for
// load balancers beside them. Every
// failure and end series the configuration names exists, at zero,
// from the start, so alerts see a series before the first failure.
package metrics

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds the tool's collectors in a registry of its own, so tests
// can make as many as they like. It implements engine.Observer.
type Metrics struct {
	Registry *prometheus.Registry

	open              prometheus.Gauge
	waiting           prometheus.Gauge
	total             prometheus.Counter
	ends              *prometheus.CounterVec
	carriersOpen      prometheus.Gauge
	carriersTotal     prometheus.Counter
	toTarget          prometheus.Counter
	fromTarget        prometheus.Counter
	handshakeFailures *prometheus.CounterVec
	dialFailures      *prometheus.CounterVec
	admissionFailures *prometheus.CounterVec
	transferFailures  *prometheus.CounterVec
	frameErrors       *prometheus.CounterVec
	carrierFailures   *prometheus.CounterVec
	carrierOpen       *prometheus.CounterVec
	handshakeSeconds  prometheus.Histogram
	keyReloads        *prometheus.CounterVec

	classify     func(error) string
	isFrameError func(error) bool
}

// Config is what New needs to know.
type Config struct {
	// Mode labels every series: "listen" or "connect".
	Mode string
	// Classify names a failure's reason for the labels.
	Classify func(error) string
	// IsFrameError picks the transfer failures that count as frame
	// errors (the protocol rejecting a frame: tampering, truncation, ...).
	IsFrameError func(error) bool
	// Reasons are the reason labels each failure counter starts with,
	// at zero, and the labels of the ends counter.
	Reasons Reasons
	// Build labels spipe_build_info (version, revision, kernels, ...).
	Build map[string]string
}

// Reasons lists the reason labels of each failure counter, and the "how"
// labels of the ends counter; CarrierOpen, those of the carrier-open
// failures for each stage.
type Reasons struct {
	Handshake, Dial, Admission, Transfer, Frame, Carrier []string
	CarrierOpen                                          map[string][]string
	Ends                                                 []string
}

// New returns the tool's metrics.
func New(c Config) *Metrics {
	reg := prometheus.NewRegistry()
	f := prometheus.WrapRegistererWith(prometheus.Labels{"mode": c.Mode}, reg)
	m := &Metrics{
		Registry:     reg,
		classify:     c.Classify,
		isFrameError: c.IsFrameError,
		open: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "spipe_connections_open",
			Help: "Connections being handled now: plain connections (from accept to close) and streams of multiplexed carriers.",
		}),
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "spipe_connections_waiting",
			Help: "Connections and streams waiting now for a --max-conns place, or streams for their carrier's allowance (each waits at most --max-conns-wait).",
		}),
		total: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "spipe_connections_total",
			Help: "Connections accepted, and streams of multiplexed carriers (a carrier's own connection counts once, as accepted).",
		}),
		ends: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "spipe_connection_ends_total",
			Help: "Connections and streams that ended without failing, by how: closed (both directions in order), " +
				"reset (a side went away first), shutdown (cut by this process's shutdown).",
		}, []string{"how"}),
		carriersOpen: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "spipe_carriers_open", Help: "Multiplexed carriers (connections through their handshake carrying streams) open now.",
		}),
		carriersTotal: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "spipe_carriers_total", Help: "Multiplexed carriers opened (connect) or accepted (listen) through their handshake.",
		}),
		handshakeFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "spipe_handshake_failures_total", Help: "Failed handshakes by reason.",
		}, []string{"reason"}),
		dialFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "spipe_dial_failures_total",
			Help: "Connections whose target (for connect: the spipe listener) could not be reached, by reason.",
		}, []string{"reason"}),
		admissionFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "spipe_admission_failures_total",
			Help: "Connections and streams turned away at a limit (reset) before their dial, by reason.",
		}, []string{"reason"}),
		transferFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "spipe_transfer_failures_total",
			Help: "Connections and streams that failed after the handshake and the dial, by reason (a side leaving is an end, not a failure).",
		}, []string{"reason"}),
		carrierFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "spipe_carrier_failures_total", Help: "Multiplexed carriers that ended in an error, by reason.",
		}, []string{"reason"}),
		carrierOpen: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "spipe_carrier_open_failures_total",
			Help: "connect --mux: carriers that could not be opened to the listener, by stage (dial, handshake) and reason " +
				"(not connections: one that then finds no carrier is a dial failure).",
		}, []string{"stage", "reason"}),
		frameErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "spipe_frame_errors_total", Help: "Frames rejected by the protocol (tampered, truncated, oversize, ...), by reason.",
		}, []string{"reason"}),
		handshakeSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "spipe_handshake_duration_seconds",
			Help:    "Time to complete a handshake.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 14), // 100 µs to ~15 s
		}),
		keyReloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "spipe_key_reloads_total", Help: "Key file reloads (SIGHUP), by result: success or failure (the old keys stay in use).",
		}, []string{"result"}),
	}
	for vec, reasons := range map[*prometheus.CounterVec][]string{
		m.handshakeFailures: c.Reasons.Handshake,
		m.dialFailures:      c.Reasons.Dial,
		m.admissionFailures: c.Reasons.Admission,
		m.transferFailures:  c.Reasons.Transfer,
		m.frameErrors:       c.Reasons.Frame,
		m.carrierFailures:   c.Reasons.Carrier,
		m.ends:              c.Reasons.Ends,
	} {
		for _, r := range reasons {
			vec.WithLabelValues(r)
		}
	}
	for stage, reasons := range c.Reasons.CarrierOpen {
		for _, r := range reasons {
			m.carrierOpen.WithLabelValues(stage, r)
		}
	}
	m.keyReloads.WithLabelValues("success")
	m.keyReloads.WithLabelValues("failure")
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "spipe_build_info",
		Help:        "Always 1; the labels say which build runs: version, VCS revision, Go version and the kernels this CPU uses.",
		ConstLabels: c.Build,
	})
	build.Set(1)
	bytes := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "spipe_bytes_total", Help: "Plaintext bytes forwarded, by direction.",
	}, []string{"direction"})
	m.toTarget = bytes.WithLabelValues("to_target")
	m.fromTarget = bytes.WithLabelValues("from_target")
	f.MustRegister(m.open, m.waiting, m.total, m.ends, m.carriersOpen, m.carriersTotal, bytes,
		m.handshakeFailures, m.dialFailures, m.admissionFailures, m.transferFailures, m.frameErrors, m.carrierFailures,
		m.carrierOpen, m.handshakeSeconds, m.keyReloads, build)
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// ConnOpened counts an accepted connection.
func (m *Metrics) ConnOpened() { m.open.Inc(); m.total.Inc() }

// ConnClosed counts a connection gone.
func (m *Metrics) ConnClosed() { m.open.Dec() }

// CarrierOpened counts a multiplexed carrier through its handshake.
func (m *Metrics) CarrierOpened() { m.carriersOpen.Inc(); m.carriersTotal.Inc() }

// CarrierClosed counts a carrier gone.
func (m *Metrics) CarrierClosed() { m.carriersOpen.Dec() }

// Handshake records a handshake's duration, or its failure.
func (m *Metrics) Handshake(d time.Duration, err error) {
	if err != nil {
		m.handshakeFailures.WithLabelValues(m.classify(err)).Inc()
		return
	}
	m.handshakeSeconds.Observe(d.Seconds())
}

// Bytes counts n plaintext bytes forwarded.
func (m *Metrics) Bytes(toTarget bool, n int) {
	if toTarget {
		m.toTarget.Add(float64(n))
	} else {
		m.fromTarget.Add(float64(n))
	}
}

// DialError counts a target that could not be reached.
func (m *Metrics) DialError(err error) {
	m.dialFailures.WithLabelValues(m.classify(err)).Inc()
}

// KeyReload counts a reload of the key files, successful or not.
func (m *Metrics) KeyReload(ok bool) {
	if ok {
		m.keyReloads.WithLabelValues("success").Inc()
	} else {
		m.keyReloads.WithLabelValues("failure").Inc()
	}
}

// AdmissionError counts a connection turned away at a limit.
func (m *Metrics) AdmissionError(err error) {
	m.admissionFailures.WithLabelValues(m.classify(err)).Inc()
}

// Waiting counts connections beginning (+1) or ending (-1) a wait for a
// place.
func (m *Metrics) Waiting(delta int) { m.waiting.Add(float64(delta)) }

// Ended counts a connection that ended without failing, by how.
func (m *Metrics) Ended(how string) { m.ends.WithLabelValues(how).Inc() }

// CarrierFailed counts a carrier that ended in an error (a frame the
// protocol rejected is a frame error too).
func (m *Metrics) CarrierFailed(err error) { m.failedAfterHandshake(m.carrierFailures, err) }

// CarrierOpenFailed counts a carrier that could not be opened, by stage.
func (m *Metrics) CarrierOpenFailed(stage string, err error) {
	m.carrierOpen.WithLabelValues(stage, m.classify(err)).Inc()
}

// TransferError counts a connection that failed after its handshake (a
// frame the protocol rejected is a frame error too).
func (m *Metrics) TransferError(err error) { m.failedAfterHandshake(m.transferFailures, err) }

// failedAfterHandshake counts err in vec by its reason, and in the frame
// errors if the protocol rejected a frame.
func (m *Metrics) failedAfterHandshake(vec *prometheus.CounterVec, err error) {
	reason := m.classify(err)
	vec.WithLabelValues(reason).Inc()
	if m.isFrameError(err) {
		m.frameErrors.WithLabelValues(reason).Inc()
	}
}

// Serve serves /metrics and /healthz on ln until ctx is done. /healthz
// answers 200 "ok" until draining is closed (nil: never), then 503
// "shutting down", so a load balancer probing it stops sending new
// connections while the open ones finish; ctx should therefore outlive
// the shutdown.
func (m *Metrics) Serve(ctx context.Context, ln net.Listener, log *slog.Logger, draining <-chan struct{}) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { health(w, draining) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	stop := context.AfterFunc(ctx, func() { srv.Close() })
	defer stop()
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	if log != nil {
		log.Error("metrics server failed", "err", err)
	}
	return err
}

// health answers a health check (GET or HEAD /healthz).
func health(w http.ResponseWriter, draining <-chan struct{}) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	select {
	case <-draining:
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "shutting down\n")
	default:
		io.WriteString(w, "ok\n")
	}
}
