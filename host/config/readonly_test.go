package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/host/config"
)

// TestReadOnlyConfig: a config mounted read-only (here: mode 0444, as the
// deploy/ manifests mount the ConfigMap) is reported, through the
// symlinks a ConfigMap volume uses; a normal file is not.
func TestReadOnlyConfig(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "..data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(data, "toolgate.hcl")
	if err := os.WriteFile(file, []byte("# empty\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "toolgate.hcl")
	if err := os.Symlink(filepath.Join("..data", "toolgate.hcl"), link); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	if err := config.ReadOnly(link); err != nil {
		t.Fatalf("writable config reported read-only: %v", err)
	}
	if err := os.Chmod(file, 0o444); err != nil {
		t.Fatal(err)
	}
	err := config.ReadOnly(link)
	if !errors.Is(err, config.ErrReadOnlyConfig) {
		t.Fatalf("ReadOnly(0444 config) = %v, want ErrReadOnlyConfig", err)
	}
}
