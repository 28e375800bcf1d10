// Package lbtest runs spipe behind a real load balancer: Debian's haproxy
// with contrib/haproxy/haproxy.cfg, in front of two real "spipe listen"
// processes, all on loopback, started and stopped by the test. It checks
// what "More than one host" in the README promises: connections spread
// over both listeners, each listener names the client (not the balancer)
// to its target, a flood from one client address leaves another client's
// echo within 3 s, and a listener stopped with SIGTERM loses no
// connection the balancer sends once its /healthz turned 503.
//
// `make e2e` runs it (scripts/e2e.sh sets SPIPE_E2E_BIN to the spipe it
// built); under a plain `go test` it skips. The package has no code of its
// own.
package lbtest
