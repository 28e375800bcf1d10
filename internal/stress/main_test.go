package stress

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// binDir holds the spipe binary the process tests build, once for all.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "spipe-stress-")
	if err != nil {
		panic(err)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	buildOnce sync.Once
	buildErr  error
)

// spipeBinary builds cmd/spipe (once) and returns its path.
func spipeBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(binDir, "spipe")
	buildOnce.Do(func() {
		build := exec.Command("go", "build", "-o", bin, "github.com/spipe-dev/spipe/cmd/spipe")
		build.Stderr = os.Stderr
		buildErr = build.Run()
	})
	require.NoError(t, buildErr, "building spipe")
	return bin
}
