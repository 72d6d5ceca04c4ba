package config_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolgate/toolgate/host/config"
)

// ExampleLoad is how a front end reads its configuration: Discover picks
// the file (a --config flag, TOOLGATE_CONFIG, or the default places), Load
// returns the projection and its diagnostics, and WriteDiagnostics renders
// them with the offending line, the way toolgate's CLI does.
func ExampleLoad() {
	dir, err := os.MkdirTemp("", "toolgate-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	flagConfig := filepath.Join(dir, "toolgate.hcl")
	src := "server \"demo\" {\n  command = \"mcp-demo\"\n  startup_timeout_sec = \"soon\"\n}\n"
	if err := os.WriteFile(flagConfig, []byte(src), 0o600); err != nil {
		log.Fatal(err)
	}

	path, err := config.Discover(flagConfig, nil)
	if err != nil {
		log.Fatal(err)
	}
	cfg, diags := config.Load(path, config.LoadOptions{})
	if len(diags) > 0 {
		var out strings.Builder
		_ = config.WriteDiagnostics(&out, diags, cfg.Files, 100, false)
		// (Cut the temporary directory, so the output below is stable.)
		fmt.Print(strings.ReplaceAll(out.String(), dir+string(filepath.Separator), ""))
	}
	if diags.HasErrors() {
		fmt.Println("invalid configuration")
	}
	// Output:
	// Error: Incorrect attribute value type
	//
	//   on toolgate.hcl line 3, in server "demo":
	//    3:   startup_timeout_sec = "soon"
	//
	// Inappropriate value for attribute "startup_timeout_sec": a number is required.
	//
	// invalid configuration
}
