package config_test

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const configPkg = "github.com/toolgate/toolgate/host/config"

// lowLayers take their own option types instead of config structs, so
// they can be used and tested without a configuration and do not change
// with the config language. The translations live in the wiring: host
// (execution, ratelimit), host/manager (launch), host/gateway (tokenauth).
var lowLayers = []string{"./host/launch", "./host/execution", "./host/ratelimit", "./host/tokenauth"}

// TestLowLayersDoNotDependOnConfig is a boundary make check enforces:
// neither the low layers nor anything they import depends on host/config.
// Tests are not checked: they may build a configuration to wire a host.
func TestLowLayersDoNotDependOnConfig(t *testing.T) {
	args := append([]string{"list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`}, lowLayers...)
	cmd := exec.CommandContext(t.Context(), "go", args...)
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var importers []string
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) > 1 && slices.Contains(fields[1:], configPkg) {
			importers = append(importers, fields[0])
		}
	}
	if len(importers) > 0 {
		t.Fatalf("host/launch, host/execution, host/ratelimit and host/tokenauth must not depend on host/config, "+
			"but these packages they build on import it:\n%s\ngive the package its own option type and translate "+
			"the config block where it is wired (host/lowlayers.go, host/manager, host/gateway)",
			strings.Join(importers, "\n"))
	}
}
