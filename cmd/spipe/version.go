package main

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/spipe-dev/spipe/internal/buildinfo"
)

// versionText is what "spipe version" and "spipe --version" print: the
// version and VCS revision from the build information, the Go version and
// platform, and the kernel each primitive uses on this CPU.
func versionText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "spipe %s\n", buildinfo.Version())
	fmt.Fprintf(&b, "revision %s\n", buildinfo.Revision())
	fmt.Fprintf(&b, "go %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, k := range buildinfo.Kernels() {
		fmt.Fprintf(&b, "%s kernel: %s\n", k.Primitive, k.Kernel)
	}
	return b.String()
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, VCS revision, Go version and the cipher and MAC kernels this CPU uses",
		Example: `  spipe version
  spipe --version`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), versionText())
			return err
		},
	}
}
