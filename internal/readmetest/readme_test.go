package readmetest

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README's ```go blocks are compiled and vetted as they stand. A
// block is either a whole file (it starts with a package clause) or a
// fragment: statements that the test wraps in a function with a
// ctx context.Context in scope, importing each package the fragment names
// (a standard-library package or one of the module's pkg/ packages,
// found by package name). A name that fits several packages (rand,
// template) needs a whole file. Whole files may import only what a user
// can: no internal packages.
//
// Each block goes to `go vet` as an overlay file of this package, with
// its package clause renamed, so nothing is written into the tree, and a
// //line directive makes errors point at README.md.

const readmePath = "../../README.md"

// readmeAbs is README.md's absolute path, for the //line directives, so
// that go vet's messages name the README wherever it runs.
var readmeAbs, _ = filepath.Abs(readmePath)

func TestREADMEExamplesCompile(t *testing.T) {
	text, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	blocks := goBlocks(string(text))
	require.GreaterOrEqual(t, len(blocks), 3, "the README's library examples (chacha20, aead, spipe)")
	index := packageIndex(t)
	dir, err := filepath.Abs(".")
	require.NoError(t, err)
	for _, b := range blocks {
		t.Run(fmt.Sprintf("README.md:%d", b.line), func(t *testing.T) {
			src, err := asPackageFile(b, index)
			require.NoError(t, err)
			vetOverlay(t, dir, src)
		})
	}
}

// block is one ```go block: its code and the README line it starts on.
type block struct {
	line int
	code string
}

var fence = regexp.MustCompile("^```(\\w*)\\s*$")

// goBlocks returns the ```go blocks of markdown, in order.
func goBlocks(markdown string) []block {
	var out []block
	var cur *block
	var code strings.Builder
	for i, l := range strings.Split(markdown, "\n") {
		m := fence.FindStringSubmatch(l)
		switch {
		case m != nil && cur == nil:
			if m[1] == "go" {
				cur = &block{line: i + 2}
				code.Reset()
			} else {
				cur = &block{line: -1} // another language: skip to its end
			}
		case m != nil && m[1] == "": // a closing fence has no info string
			if cur.line > 0 {
				cur.code = code.String()
				out = append(out, *cur)
			}
			cur = nil
		case cur != nil:
			code.WriteString(l + "\n")
		}
	}
	return out
}

// asPackageFile returns b as a file of package readmetest: a whole file
// with its package clause replaced, or a fragment wrapped in a function,
// with the imports it needs.
func asPackageFile(b block, index map[string][]string) (string, error) {
	directive := fmt.Sprintf("//line %s:%d\n", readmeAbs, b.line)
	if strings.HasPrefix(strings.TrimSpace(b.code), "package ") {
		f, err := parser.ParseFile(token.NewFileSet(), "", b.code, parser.ImportsOnly)
		if err != nil {
			return "", err
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if isInternal(path) {
				return "", fmt.Errorf("README.md:%d imports %s, which users cannot import", b.line, path)
			}
		}
		// The package clause keeps its line, so the line numbers stay right.
		code := regexp.MustCompile(`(?m)^package \w+`).ReplaceAllString(b.code, "package readmetest")
		return directive + code, nil
	}
	name := fmt.Sprintf("readmeExampleAtLine%d", b.line)
	body := "\n" + directive + b.code
	wrapped := "package readmetest\n\nfunc " + name + "(ctx context.Context) {" + body + "}\n"
	f, err := parser.ParseFile(token.NewFileSet(), "", wrapped, parser.AllErrors)
	if err != nil {
		return "", fmt.Errorf("README.md:%d: not a Go fragment: %w", b.line, err)
	}
	var imports []string
	for _, name := range unresolvedNames(f) {
		paths := index[name]
		switch len(paths) {
		case 0: // not a package: the compiler will say what it is
		case 1:
			imports = append(imports, strconv.Quote(paths[0]))
		default:
			return "", fmt.Errorf("README.md:%d: %s could be any of %s: write the example as a whole file with its imports",
				b.line, name, strings.Join(paths, ", "))
		}
	}
	sort.Strings(imports)
	return "package readmetest\n\nimport (\n\t" + strings.Join(imports, "\n\t") + "\n)\n\nfunc " + name +
		"(ctx context.Context) {" + body + "}\n", nil
}

// unresolvedNames returns the names used as X in X.Sel that the fragment
// does not declare: the packages it refers to.
func unresolvedNames(f *ast.File) []string {
	unresolved := map[*ast.Ident]bool{}
	for _, id := range f.Unresolved {
		unresolved[id] = true
	}
	seen := map[string]bool{}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && unresolved[id] && !seen[id.Name] {
				seen[id.Name] = true
				out = append(out, id.Name)
			}
		}
		return true
	})
	return out
}

// packageIndex maps each package name a README fragment may use to its
// import paths: the standard library's and the module's public packages.
func packageIndex(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.Name}} {{.ImportPath}}", "std", "github.com/spipe-dev/spipe/pkg/...").Output()
	require.NoError(t, err)
	index := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, path, _ := strings.Cut(l, " ")
		if !isInternal(path) && !strings.HasPrefix(path, "vendor/") && name != "main" {
			index[name] = append(index[name], path)
		}
	}
	return index
}

// isInternal reports whether path has an internal element.
func isInternal(path string) bool {
	return path == "internal" || strings.HasPrefix(path, "internal/") ||
		strings.Contains(path, "/internal/") || strings.HasSuffix(path, "/internal")
}

// vetOverlay runs go vet on this package with src as one more file of it.
func vetOverlay(t *testing.T, dir, src string) {
	t.Helper()
	tmp := t.TempDir()
	file := filepath.Join(tmp, "example.go")
	require.NoError(t, os.WriteFile(file, []byte(src), 0o644))
	overlay := filepath.Join(tmp, "overlay.json")
	replace := fmt.Sprintf(`{"Replace":{%q:%q}}`, filepath.Join(dir, "zz_readme_example.go"), file)
	require.NoError(t, os.WriteFile(overlay, []byte(replace), 0o644))
	cmd := exec.Command("go", "vet", "-overlay", overlay, ".")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Errorf("go vet: %v\n%s\nas compiled:\n%s", err, stderr.String(), src)
	}
}

// TestGoBlocks checks the extraction on a small document: only ```go
// blocks, with the line each starts on, and other fences skipped whole.
func TestGoBlocks(t *testing.T) {
	md := "# T\n```sh\nmake\n```go\n```\ntext\n```go\nx := 1\n_ = x\n```\n\n```go\npackage main\n```\n"
	assert.Equal(t, []block{{8, "x := 1\n_ = x\n"}, {13, "package main\n"}}, goBlocks(md))
}

// TestFragmentImports checks that a fragment gets exactly the imports it
// names, that a name it declares itself is not taken for a package, and
// that an ambiguous name is refused.
func TestFragmentImports(t *testing.T) {
	index := map[string][]string{
		"fmt": {"fmt"}, "aead": {"github.com/spipe-dev/spipe/pkg/aead"},
		"context": {"context"}, "rand": {"crypto/rand", "math/rand"}, "io": {"io"},
	}
	src, err := asPackageFile(block{5, "io := 3\na, _ := aead.New(aead.ChaCha20Poly1305, nil)\nfmt.Println(a, io, ctx)\n"}, index)
	require.NoError(t, err)
	assert.Contains(t, src, "import (\n\t\"context\"\n\t\"fmt\"\n\t\"github.com/spipe-dev/spipe/pkg/aead\"\n)")
	assert.NotContains(t, src, `"io"`)
	assert.Contains(t, src, "//line "+readmeAbs+":5\nio := 3")

	_, err = asPackageFile(block{9, "rand.Read(nil)\n"}, index)
	assert.ErrorContains(t, err, "crypto/rand, math/rand")

	_, err = asPackageFile(block{1, "package main\nimport \"github.com/spipe-dev/spipe/internal/alias\"\n"}, index)
	assert.ErrorContains(t, err, "users cannot import")
}
