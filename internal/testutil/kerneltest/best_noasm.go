//go:build !amd64 || !gc || purego

package kerneltest

// BestKernel is the path the cores' dispatch must pick: without assembly,
// the generic one.
func BestKernel() string { return "generic" }
