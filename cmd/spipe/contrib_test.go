package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/service"
)

const contrib = "../../contrib/systemd"

// unitSetting returns the values of key in a unit file, in order.
func unitSetting(t *testing.T, file, key string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(contrib, file))
	require.NoError(t, err)
	var v []string
	for _, m := range regexp.MustCompile(`(?m)^`+key+`=(.*)$`).FindAllStringSubmatch(string(b), -1) {
		v = append(v, m[1])
	}
	return v
}

// confValues reads an example EnvironmentFile.
func confValues(t *testing.T, file string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(contrib, file))
	require.NoError(t, err)
	env := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			env[k] = v
		}
	}
	return env
}

// TestSystemdUnitsCommandLines: the command line each unit runs, with the
// example configuration (and with the socket-activated source), is one
// spipe accepts; the units carry the hardening the README promises.
func TestSystemdUnitsCommandLines(t *testing.T) {
	for _, mode := range []service.Mode{service.Listen, service.Connect} {
		unit := "spipe-" + mode.String() + "@.service"
		exec := unitSetting(t, unit, "ExecStart")
		require.Len(t, exec, 1, unit)
		env := confValues(t, mode.String()+".conf.example")
		for _, source := range []string{env["SOURCE"], "systemd:" + unitSetting(t, "spipe-"+mode.String()+"@.socket", "FileDescriptorName")[0]} {
			line := strings.NewReplacer("${SOURCE}", source, "${TARGET}", env["TARGET"], "$OPTIONS", env["OPTIONS"],
				"%d", "/run/credentials/x").Replace(exec[0])
			args := strings.Fields(line)
			require.Equal(t, []string{"/usr/local/bin/spipe", mode.String()}, args[:2], unit)
			var p pipeFlags
			fs := pflag.NewFlagSet(unit, pflag.ContinueOnError)
			p.register(fs, mode)
			require.NoError(t, fs.Parse(args[2:]), line)
			_, err := p.options(mode)
			assert.NoError(t, err, line)
		}
		for _, want := range []string{"DynamicUser=yes", "NoNewPrivileges=yes", "ProtectSystem=strict", "CapabilityBoundingSet="} {
			k, v, _ := strings.Cut(want, "=")
			assert.Contains(t, unitSetting(t, unit, k), v, "%s: %s", unit, want)
		}
		assert.Equal(t, []string{"key:/etc/spipe/%i.key"}, unitSetting(t, unit, "LoadCredential"), unit)
	}
	// The plaintext side of connect is on loopback unless told otherwise.
	assert.Equal(t, []string{"127.0.0.1:%i"}, unitSetting(t, "spipe-connect@.socket", "ListenStream"))
}
