package aeadcore

import "github.com/spipe-dev/spipe/internal/impl"

//go:generate go run -C ../../asmgen ./aead -out ../internal/aeadcore/aead_amd64.s -stubs ../internal/aeadcore/aead_stubs_amd64.go -pkg aeadcore

// kernels lists the implementations compiled in: "generic" (no kernel:
// the functions report the message unhandled) and, on amd64, "avx512".
var kernels = impl.New("aeadcore")

// Kernel names the implementation in use.
func Kernel() string { return kernels.Name() }

// Kernels lists the implementations this CPU can run, best first, ending
// with "generic". For tests and diagnostics.
func Kernels() []string { return kernels.Names() }

// UseKernel makes the package use the named implementation until the
// returned function restores the previous one ("generic" turns the
// kernels off). It exists so tests can run every path; it is not safe to
// call while other goroutines seal or open.
func UseKernel(name string) (restore func(), err error) { return kernels.Use(name) }
