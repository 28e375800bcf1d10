package engine

import (
	"fmt"
	"os"
	"testing"
)

// TestMain runs the tests, or, in a child process a test started, that
// child's part.
func TestMain(m *testing.M) {
	if os.Getenv("SPIPE_SYSTEMD_CHILD") == "1" {
		if err := systemdChild(); err != nil {
			fmt.Println("systemd child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
