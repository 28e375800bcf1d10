// Package buildinfo says which build of spipe is running: its version and
// VCS revision (from the build information Go embeds, or the linker) and
// the kernels the ciphers chose on this CPU. "spipe version", "spipe
// --version" and the spipe_build_info metric all read it here.
package buildinfo

import (
	"runtime"
	"runtime/debug"

	"github.com/spipe-dev/spipe/internal/poly1305"
	"github.com/spipe-dev/spipe/pkg/chacha20"
	"github.com/spipe-dev/spipe/pkg/salsa20"
)

// version may be set when linking:
//
//	go build -ldflags "-X github.com/spipe-dev/spipe/internal/buildinfo.version=v1.2.3"
//
// Otherwise the module version from the build information is used.
var version = ""

// Version returns the version of spipe: the one set when linking, else
// the main module's version ("v1.2.3" for go install ...@v1.2.3; a
// pseudo-version or "(devel)" for a build from a checkout).
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// Revision returns the VCS revision the binary was built from, with
// "+modified" if the tree had local changes, or "unknown" when the build
// recorded none (go build -buildvcs=false, or not built in a checkout).
func Revision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return revision(bi.Settings)
}

func revision(settings []debug.BuildSetting) string {
	rev, modified := "", false
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	if modified {
		rev += "+modified"
	}
	return rev
}

// Kernel is the kernel one primitive uses on this CPU.
type Kernel struct {
	Primitive string // "chacha20", "salsa20" or "poly1305"
	Kernel    string // e.g. "avx512", "generic"
}

// Kernels returns the kernel of each primitive, in a fixed order.
func Kernels() []Kernel {
	return []Kernel{
		{"chacha20", chacha20.Kernel()},
		{"salsa20", salsa20.Kernel()},
		{"poly1305", poly1305.Kernel()},
	}
}

// Labels returns the labels of the spipe_build_info metric.
func Labels() map[string]string {
	l := map[string]string{
		"version":   Version(),
		"revision":  Revision(),
		"goversion": runtime.Version(),
	}
	for _, k := range Kernels() {
		l[k.Primitive+"_kernel"] = k.Kernel
	}
	return l
}
