// Command apigen writes the exported API of Go packages as sorted text,
// one line per exported name with its signature, in the manner of the
// standard library's api/go1.*.txt files:
//
//	pkg github.com/spipe-dev/spipe/pkg/aead, func New(Suite, []uint8) (cipher.AEAD, error)
//	pkg github.com/spipe-dev/spipe/pkg/aead, method (*Secretbox) Open([]uint8, *[24]uint8, []uint8) ([]uint8, error)
//	pkg github.com/spipe-dev/spipe/pkg/aead, const ChaCha20Poly1305 Suite = 1
//
// It writes one file per package, named after the package's path in the
// module: pkg/aead goes to <out>/pkg/aead.txt. One file per package keeps
// the diff of a change to one package in that package's file, and keeps
// branches that change different packages from conflicting in one file.
//
// Usage (from the module root; `make api` and `make api-check` run it):
//
//	go run ./internal/tools/apigen -out api ./pkg/...
//
// It loads the packages from the compiler's export data (`go list -export`)
// with go/types, standard library only. -tags and -goarch describe the
// build to load, so that api-check can prove the API is the same in every
// build.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	out := flag.String("out", "api", "directory to write the API files to (created if missing; its .txt files are replaced)")
	tags := flag.String("tags", "", "build tags of the build to describe")
	goarch := flag.String("goarch", "", "GOARCH of the build to describe (default: the host's)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: apigen [-out dir] [-tags tags] [-goarch arch] packages...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	patterns := flag.Args()
	if len(patterns) == 0 {
		patterns = []string{"./pkg/..."}
	}
	if err := run(*out, build{tags: *tags, goarch: *goarch}, patterns); err != nil {
		fmt.Fprintln(os.Stderr, "apigen:", err)
		os.Exit(1)
	}
}

// build selects the build whose API is described.
type build struct {
	tags, goarch string
	dir          string // where go list runs; "" for the current directory
	// withInternal describes internal packages too (the test's fixture
	// lives under internal/); otherwise they are skipped.
	withInternal bool
}

// run loads the packages matching patterns and writes their API files
// into out, replacing the .txt files there.
func run(out string, b build, patterns []string) error {
	pkgs, err := load(b, patterns)
	if err != nil {
		return err
	}
	if err := removeTxt(out); err != nil {
		return err
	}
	for _, p := range pkgs {
		name := filepath.Join(out, filepath.FromSlash(p.rel)+".txt")
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return err
		}
		text := strings.Join(apiLines(p.pkg), "\n") + "\n"
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// removeTxt deletes the .txt files under dir, so that the API file of a
// package that is gone does not linger.
func removeTxt(dir string) error {
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".txt") {
			return os.Remove(path)
		}
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// loaded is one package to describe: its types and its path relative to
// the module root.
type loaded struct {
	pkg *types.Package
	rel string
}

// load runs go list once for the packages and all their dependencies,
// building their export data, and imports each package matching the
// patterns from it. Internal packages are skipped: nothing outside the
// module can import them.
func load(b build, patterns []string) ([]loaded, error) {
	args := []string{"list", "-export", "-deps", "-f",
		`{{.ImportPath}}{{"\t"}}{{.Export}}{{"\t"}}{{.DepOnly}}{{"\t"}}{{with .Module}}{{.Path}}{{end}}`}
	if b.tags != "" {
		args = append(args, "-tags", b.tags)
	}
	cmd := exec.Command("go", append(args, patterns...)...)
	cmd.Dir = b.dir
	cmd.Env = os.Environ()
	if b.goarch != "" {
		cmd.Env = append(cmd.Env, "GOARCH="+b.goarch)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	listing, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, stderr.Bytes())
	}

	exports := map[string]string{}
	type target struct{ path, module string }
	var targets []target
	sc := bufio.NewScanner(bytes.NewReader(listing))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 4 {
			return nil, fmt.Errorf("go list: unexpected line %q", sc.Text())
		}
		exports[f[0]] = f[1]
		if f[2] == "false" && (b.withInternal || !isInternal(f[0])) {
			targets = append(targets, target{f[0], f[3]})
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok || file == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	var out []loaded
	for _, t := range targets {
		pkg, err := imp.Import(t.path)
		if err != nil {
			return nil, fmt.Errorf("import %s: %w", t.path, err)
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(t.path, t.module), "/")
		if t.module == "" || rel == t.path {
			return nil, fmt.Errorf("%s is not in a module", t.path)
		}
		out = append(out, loaded{pkg, rel})
	}
	return out, nil
}

// isInternal reports whether path has an internal element.
func isInternal(path string) bool {
	for _, e := range strings.Split(path, "/") {
		if e == "internal" {
			return true
		}
	}
	return false
}
