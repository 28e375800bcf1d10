package alias

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOverlap(t *testing.T) {
	buf := make([]byte, 64)
	other := make([]byte, 64)
	cases := []struct {
		name         string
		x, y         []byte
		any, inexact bool
	}{
		{"disjoint", buf, other, false, false},
		{"same", buf, buf, true, false},
		{"shifted", buf[1:], buf[:63], true, true},
		{"adjacent", buf[:32], buf[32:], false, false},
		{"touching one byte", buf[:33], buf[32:], true, true},
		{"empty", buf[:0], buf, false, false},
		{"prefix", buf[:10], buf, true, false},
	}
	for _, c := range cases {
		assert.Equal(t, c.any, AnyOverlap(c.x, c.y), c.name)
		assert.Equal(t, c.inexact, InexactOverlap(c.x, c.y), c.name)
	}
}
