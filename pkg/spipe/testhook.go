package spipe

import (
	"io"

	"github.com/spipe-dev/spipe/pkg/spipe/internal/testhook"
)

func init() {
	testhook.WithRand = func(config any, r io.Reader) { config.(*Config).rand = r }
}
