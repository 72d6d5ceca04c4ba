package testbinary

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// EnvBin names the directory make build fills (bin/, with plugins in
// bin/plugins/).
const EnvBin = "TOOLGATE_BIN"

// Locate returns the path of the plugin binary name, built from the main
// package pkg (an import path) into dir unless $TOOLGATE_BIN/plugins/name
// exists.
func Locate(name, pkg, dir string) (string, error) {
	if bin := os.Getenv(EnvBin); bin != "" {
		path := filepath.Join(bin, "plugins", name)
		if info, err := os.Stat(path); err == nil && !info.IsDir() {
			return path, nil
		}
	}
	path := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", path, pkg)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", pkg, err, out)
	}
	return path, nil
}
