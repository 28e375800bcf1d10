package buildinfo

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVersionFromLinker(t *testing.T) {
	defer func(v string) { version = v }(version)
	version = "v9.8.7"
	assert.Equal(t, "v9.8.7", Version())
	assert.Equal(t, "v9.8.7", Labels()["version"])
}

func TestRevision(t *testing.T) {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	for want, settings := range map[string][]debug.BuildSetting{
		rev:               {{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}},
		rev + "+modified": {{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}},
		"unknown":         {{Key: "-buildmode", Value: "exe"}},
	} {
		assert.Equal(t, want, revision(settings))
	}
	// This test binary: whatever go test recorded, in one of those forms.
	assert.Regexp(t, `^(unknown|[0-9a-f]{40}(\+modified)?)$`, Revision())
}

func TestLabels(t *testing.T) {
	l := Labels()
	assert.Equal(t, runtime.Version(), l["goversion"])
	assert.Regexp(t, `^(avx512|avx2|ssse3|generic)$`, l["chacha20_kernel"])
	assert.Regexp(t, `^(avx512|avx2|ssse3|generic)$`, l["salsa20_kernel"])
	assert.Regexp(t, `^(avx512ifma|avx2|scalar|generic)$`, l["poly1305_kernel"])
	assert.Len(t, l, 6)
}
