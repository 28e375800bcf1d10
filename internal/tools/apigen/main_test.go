package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fixturePath = "github.com/spipe-dev/spipe/internal/tools/apigen/testdata/fixture"

// fixtureAPI is the API of testdata/fixture, written out by hand from its
// source (not produced by apigen), in sorted order.
var fixtureAPI = []string{
	"const First Mode = 6", // iota is its index in the block
	"const Named Mode = 2",
	"const Ratio = 1.5",
	"const Second Mode = 7",
	`const Text = "a\tb"`,
	"const Third = 0.333333 // 1/3",
	"const Untyped = 7",
	"func Chans(<-chan int, chan<- []string, chan (<-chan int)) map[string][]io.Reader",
	"func Plain([]uint8, int32, *[8]uint8) uint8",
	"func Sum[T Number](...T) T",
	"func Variadic(string, ...any) (int, error)",
	"method (*Box[T, K]) Get(K) (T, bool)",
	"method (*Record) PtrOnly()",
	"method (*Record) Save() error",
	"method (Mode) String() string",
	"method (Record) Visible() int",
	"type Alias = Box[int, string]",
	"type Box[T any, K comparable] struct",
	"type Box[T any, K comparable] struct, Value T",
	"type Fn func(string) error",
	"type Mode uint8",
	"type Number interface",
	"type Number interface, embedded ~int | ~int64 | float64",
	"type Pair struct",
	"type Pair struct, A int",
	"type Pair struct, B int",
	"type Record struct",
	"type Record struct, Name string",
	"type Record struct, Promoted int",
	"type Record struct, embedded *sync.Mutex",
	"type Record struct, embedded io.Reader",
	"type Store interface { Get, Put }",
	"type Store interface, Get(string) ([]uint8, bool)",
	"type Store interface, Put(string, []uint8) error",
	"type Store interface, embedded io.Closer",
	"type Store interface, unexported methods",
	"var ErrThing error",
	"var Hook func(string, []uint8) (int, error)",
}

// TestFixtureAPI loads the fixture through go list's export data, as the
// tool does, and compares its lines with the hand-written API.
func TestFixtureAPI(t *testing.T) {
	pkgs, err := load(build{dir: "testdata/fixture", withInternal: true}, []string{"."})
	require.NoError(t, err)
	require.Len(t, pkgs, 1)
	var want []string
	for _, l := range fixtureAPI {
		want = append(want, "pkg "+fixturePath+", "+l)
	}
	assert.Equal(t, want, apiLines(pkgs[0].pkg))
}

// TestRunWritesOneFilePerPackage runs the tool into a directory holding a
// stale file: it writes the fixture's file under its path in the module,
// removes the stale one, and by default leaves internal packages out.
func TestRunWritesOneFilePerPackage(t *testing.T) {
	out := t.TempDir()
	stale := filepath.Join(out, "pkg", "gone.txt")
	require.NoError(t, os.MkdirAll(filepath.Dir(stale), 0o755))
	require.NoError(t, os.WriteFile(stale, []byte("pkg gone, func F()\n"), 0o644))

	require.NoError(t, run(out, build{dir: "testdata/fixture", withInternal: true}, []string{"."}))
	text, err := os.ReadFile(filepath.Join(out, "internal/tools/apigen/testdata/fixture.txt"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	assert.Len(t, lines, len(fixtureAPI))
	assert.NoFileExists(t, stale)

	// Without withInternal, a package under internal/ has no API.
	pkgs, err := load(build{dir: "testdata/fixture"}, []string{".", "./internal/hidden"})
	require.NoError(t, err)
	assert.Empty(t, pkgs)
}

func TestIsInternal(t *testing.T) {
	assert.True(t, isInternal("example.com/m/internal"))
	assert.True(t, isInternal("example.com/m/internal/x"))
	assert.True(t, isInternal("internal/x"))
	assert.False(t, isInternal("example.com/m/pkg/internalish"))
	assert.False(t, isInternal("example.com/m/pkg/aead"))
}

// TestLoadFailsLoudly: a pattern go list cannot load is an error with go
// list's message, not an empty API.
func TestLoadFailsLoudly(t *testing.T) {
	_, err := load(build{dir: "testdata/fixture"}, []string{"./does-not-exist"})
	assert.ErrorContains(t, err, "go list")
}
