package poly1305

import "fmt"

// kernelID names an implementation of updateBlocks. Dispatch is a switch
// on it rather than a function value, so that the MAC passed to a kernel
// does not escape to the heap (escape analysis cannot see through
// indirect calls).
type kernelID uint8

const (
	kernelGeneric kernelID = iota
	kernelScalar           // 64-bit MULQ, one block at a time
	kernelAVX2             // radix 2^26, 4 blocks per YMM
	kernelIFMA             // radix 2^44, AVX-512 IFMA
	numKernels
)

var kernelNames = [numKernels]string{"generic", "scalar", "avx2", "avx512ifma"}

// supported records which kernels this CPU (and build) can run; arch
// files set it at init. The generic kernel always runs.
var supported = [numKernels]bool{kernelGeneric: true}

// active is the kernel in use: the best supported one.
var active = kernelGeneric

// selectBest makes the best supported kernel active. Arch files call it
// from init after filling in supported.
func selectBest() {
	for k := numKernels - 1; k > 0; k-- {
		if supported[k] {
			active = k
			return
		}
	}
	active = kernelGeneric
}

// Kernel names the implementation the MAC uses on this CPU.
func Kernel() string { return kernelNames[active] }

// Kernels lists the implementations this CPU can run, best first, ending
// with "generic". For tests and diagnostics.
func Kernels() []string {
	var names []string
	for k := int(numKernels) - 1; k >= 0; k-- {
		if supported[k] {
			names = append(names, kernelNames[k])
		}
	}
	return names
}

// UseKernel makes the MAC use the named implementation until the returned
// function restores the previous one. It exists so tests can run every path
// the CPU supports; it is not safe to call while other goroutines compute
// MACs.
func UseKernel(name string) (restore func(), err error) {
	for k, n := range kernelNames {
		if n != name {
			continue
		}
		if !supported[k] {
			return nil, fmt.Errorf("poly1305: kernel %q is not supported on this CPU", name)
		}
		prev := active
		active = kernelID(k)
		return func() { active = prev }, nil
	}
	return nil, fmt.Errorf("poly1305: no kernel named %q", name)
}
