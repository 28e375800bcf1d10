//go:build !amd64 || !gc || purego

package poly1305

// ifmaThresholdForTest stands for the IFMA kernel's shortest Write where
// there is no IFMA kernel: TestMixedWrites still writes the same sizes.
const ifmaThresholdForTest = 256
