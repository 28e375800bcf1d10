package testutil

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// MarkdownTable returns the body rows of the first table after the line
// holding marker in the Markdown file at path, each row's cells trimmed
// of spaces and backquotes. The test fails if there is no such table.
func MarkdownTable(t testing.TB, path, marker string) [][]string {
	t.Helper()
	text, err := os.ReadFile(path)
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(text), marker)
	require.True(t, ok, "%s has no %q", path, marker)
	var rows [][]string
	for line := range strings.SplitSeq(after, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			if len(rows) > 0 {
				break // the table is over
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i, c := range cells {
			cells[i] = strings.ReplaceAll(strings.TrimSpace(c), "`", "")
		}
		rows = append(rows, cells)
	}
	require.GreaterOrEqual(t, len(rows), 3, "%s: no table after %q", path, marker)
	return rows[2:] // header and separator
}
