//go:build !amd64 || !gc || purego

package chachacore

// bestKernel is the path dispatch must pick: without assembly, the generic one.
func bestKernel() string { return "generic" }
