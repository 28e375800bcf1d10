//go:build !linux

package chachacore

import "testing"

// cpuTimer reports nothing where thread CPU time is not wired up.
type cpuTimer struct{}

func startCPUTimer(*testing.B) cpuTimer { return cpuTimer{} }

func (cpuTimer) report(int) {}
