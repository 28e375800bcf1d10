//go:build amd64 && gc && !purego

package kerneltest

import "golang.org/x/sys/cpu"

// BestKernel is the path the cores' dispatch must pick on this CPU, from
// the features their kernels require: both cores gate their tiers alike.
func BestKernel() string {
	x := cpu.X86
	switch {
	case x.HasAVX512F && x.HasAVX512VL && x.HasAVX && x.HasAVX2:
		return "avx512"
	case x.HasAVX && x.HasAVX2:
		return "avx2"
	case x.HasSSSE3:
		return "ssse3"
	}
	return "generic"
}
