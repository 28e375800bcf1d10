//go:build !amd64 || !gc || purego

package poly1305

// The IFMA kernel's shortest Writes, where there is no IFMA kernel:
// TestCachedPowers still writes the same sizes.
const (
	ifmaThresholdForTest       = 384
	ifmaCachedThresholdForTest = 112
)
