package cli_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/host/cli"
	"github.com/toolgate/toolgate/internal/testbin"
)

// testPlugins returns the directory of the test plugins this file uses:
// TOOLGATE_TESTPLUGINS_DIR (make test), or a temporary one they are built
// into.
func testPlugins(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("TOOLGATE_TESTPLUGINS_DIR"); dir != "" {
		return dir
	}
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator),
		"./testplugins/plugins/hook-allow", "./testplugins/plugins/hook-crash")
	cmd.Dir = testbin.Root()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building test plugins: %v\n%s", err, out)
	}
	return dir
}

func runPlugins(t *testing.T, cfgPath string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = cli.Run(context.Background(), append([]string{"plugins", "--config", cfgPath}, args...), cli.IO{
		In: strings.NewReader(""), Out: &out, Err: &errOut,
		LookupEnv: func(k string) (string, bool) {
			if k == "PATH" || k == "HOME" || k == "TMPDIR" {
				return os.LookupEnv(k)
			}
			return "", false
		},
	})
	return code, out.String(), errOut.String()
}

func TestPluginsCommand(t *testing.T) {
	plugins := testPlugins(t)
	allow := filepath.Join(plugins, "hook-allow")
	b, err := os.ReadFile(allow)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "toolgate.hcl")
	write := func(src string) {
		t.Helper()
		if err := os.WriteFile(cfgPath, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	write(`plugin "allow" {
  kind   = "hook"
  path   = "` + allow + `"
  sha256 = "` + hex.EncodeToString(sum[:]) + `"
}
`)
	code, out, errOut := runPlugins(t, cfgPath)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"PLUGIN", "allow", "hook", "hook-allow 0.0.1", "go-plugin 1, API 1", "pinned, verified", "running pid "} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}

	code, out, _ = runPlugins(t, cfgPath, "--json")
	var doc struct {
		Plugins []struct {
			Name, Kind, Checksum, Health string
			Protocol                     int
			APIVersion                   string `json:"api_version"`
			Pid                          int
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != cli.ExitOK {
		t.Fatalf("--json: exit %d, %v\n%s", code, err, out)
	}
	if p := doc.Plugins[0]; p.Name != "allow" || p.Health != "running" || p.Protocol != 1 || p.APIVersion != "1" || p.Pid == 0 {
		t.Errorf("--json = %+v", doc.Plugins)
	}

	// A refused configuration is shown like a config error, at its line.
	write(`plugin "crashy" {
  kind = "hook"
  path = "` + filepath.Join(plugins, "hook-crash") + `"
  config {
    crash_after = 0
  }
}
`)
	code, out, errOut = runPlugins(t, cfgPath)
	if code != cli.ExitFailure || !strings.Contains(out, "failed (see below)") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, want := range []string{`plugin "crashy": its configuration was refused`, "crash_after must be at least 1",
		"on " + cfgPath + " line 5", "crash_after = 0"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}
