// Package stress holds the pipe's stress tests: faults injected between
// "spipe connect" and "spipe listen" while other connections run, hostile
// clients, peers that vanish mid-stream, and load. They run in a short
// form under `go test` (and so in `make test`) and in the long form the
// hardening issue specifies with `-stress` or SPIPE_STRESS=1
// (`make stress`). The package has no code of its own.
package stress
