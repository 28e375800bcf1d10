//go:build !amd64 || !gc || purego

package chachacore

import "github.com/spipe-dev/spipe/internal/testutil/kerneltest"

// functions lists the generated kernels: none without assembly.
func functions() []kerneltest.Function { return nil }
