package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/spipe-dev/spipe/internal/poly1305"
	"github.com/spipe-dev/spipe/pkg/chacha20"
	"github.com/spipe-dev/spipe/pkg/salsa20"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3";
// otherwise the module version from the build info is used.
var version = ""

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version, the Go version and the cipher and MAC kernels this CPU uses",
		Example: `  spipe version`,
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "spipe %s\n", versionString())
			fmt.Fprintf(w, "go %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
			fmt.Fprintf(w, "chacha20 kernel: %s\n", chacha20.Kernel())
			fmt.Fprintf(w, "salsa20 kernel: %s\n", salsa20.Kernel())
			fmt.Fprintf(w, "poly1305 kernel: %s\n", poly1305.Kernel())
			return nil
		},
	}
}
