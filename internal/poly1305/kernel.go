package poly1305

import "github.com/spipe-dev/spipe/internal/impl"

//go:generate go run -C ../../asmgen ./poly1305 -out ../internal/poly1305/poly1305_amd64.s -stubs ../internal/poly1305/poly1305_stubs_amd64.go -pkg poly1305

// Dispatch is a switch on the active implementation rather than a function
// value, so that the MAC passed to a kernel does not escape to the heap
// (see package impl); the architecture file defines the kernel IDs.

// kernels lists the implementations compiled in; the architecture file
// registers the assembly ones at init.
var kernels = impl.New("poly1305")

// Kernel names the implementation the MAC uses on this CPU.
func Kernel() string { return kernels.Name() }

// Kernels lists the implementations this CPU can run, best first, ending
// with "generic". For tests and diagnostics.
func Kernels() []string { return kernels.Names() }

// UseKernel makes the MAC use the named implementation until the returned
// function restores the previous one. It exists so tests can run every path
// the CPU supports; it is not safe to call while other goroutines compute
// MACs.
func UseKernel(name string) (restore func(), err error) { return kernels.Use(name) }
