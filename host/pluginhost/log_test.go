package pluginhost

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// A plugin's JSON log line, re-emitted by go-plugin with the plugin's own
// "@module" among its pairs, keeps the host's name for it in JSON output.
func TestPluginLogLinesKeepTheBlockName(t *testing.T) {
	var out bytes.Buffer
	host := hclog.New(&hclog.LoggerOptions{Name: "toolgate", Output: &out, JSONFormat: true, Level: hclog.Trace})
	l := quietLifecycle{host.Named("plugin").Named("dd")}.Named("deny-deletes")
	l.Info("deciding", "@module", "deny-deletes", "tool", "delete_file")
	var line map[string]any
	if err := json.Unmarshal(out.Bytes(), &line); err != nil {
		t.Fatalf("%v: %s", err, out.Bytes())
	}
	if got, want := line["@module"], "toolgate.plugin.dd.deny-deletes"; got != want {
		t.Errorf("@module = %v, want %v", got, want)
	}
	if line["tool"] != "delete_file" || line["@message"] != "deciding" {
		t.Errorf("the line lost its content: %s", out.Bytes())
	}
	out.Reset()
	l.Error("plugin process exited", "path", "x")
	if !bytes.Contains(out.Bytes(), []byte(`"@level":"debug"`)) {
		t.Errorf("go-plugin's lifecycle message was not demoted: %s", out.Bytes())
	}
}
