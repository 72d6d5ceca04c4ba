package reload

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestReloadsWhenTheFileIsReplacedOrSignalled(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "toolgate.hcl")
	if err := os.WriteFile(path, []byte("# v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	reloads := make(chan struct{}, 8)
	ready := make(chan struct{})
	done := make(chan error)
	go func() {
		done <- Run(ctx, Options{Path: path, Watch: true, Signal: true, Debounce: 10 * time.Millisecond,
			Ready: func() { close(ready) }},
			func() { reloads <- struct{}{} })
	}()
	<-ready
	wait := func(what string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		select {
		case <-reloads:
		case <-ctx.Done():
			t.Fatalf("no reload after %s", what)
		}
	}
	// An editor's save: write a temporary file and rename it over.
	tmp := filepath.Join(dir, ".toolgate.hcl.tmp")
	if err := os.WriteFile(tmp, []byte("# v2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	wait("the file was replaced")

	raiseHangup(t)
	wait("SIGHUP")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := len(reloads); n != 0 {
		t.Errorf("%d extra reloads", n)
	}
}

func TestOnlyConfigFilesAreRelevant(t *testing.T) {
	for _, tt := range []struct {
		file, name string
		want       bool
	}{
		{"toolgate.hcl", "toolgate.hcl", true},
		{"toolgate.hcl", ".toolgate.hcl.tmp", false},
		{"toolgate.hcl", "other.hcl", false},
		{"", "servers.hcl", true},
		{"", ".servers.hcl.swp", false},
		{"", "notes.txt", false},
	} {
		if got := (&watcher{file: tt.file}).relevant(tt.name); got != tt.want {
			t.Errorf("watching %q: relevant(%q) = %v", tt.file, tt.name, got)
		}
	}
}

func TestWatchingAMissingPathFails(t *testing.T) {
	err := Run(t.Context(), Options{Path: filepath.Join(t.TempDir(), "nope.hcl"), Watch: true}, func() {})
	if err == nil {
		t.Fatal("watching a missing file must fail")
	}
}

// Watching a directory: a new *.hcl file written into it reloads.
func TestReloadsWhenAConfigFileAppearsInTheDirectory(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	reloads := make(chan struct{}, 8)
	ready := make(chan struct{})
	done := make(chan error)
	go func() {
		done <- Run(ctx, Options{Path: dir, Watch: true, Debounce: 10 * time.Millisecond, Ready: func() { close(ready) }},
			func() { reloads <- struct{}{} })
	}()
	<-ready
	if err := os.WriteFile(filepath.Join(dir, "servers.hcl"), []byte("# new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	timeout, stop := context.WithTimeout(t.Context(), 10*time.Second)
	defer stop()
	select {
	case <-reloads:
	case <-timeout.Done():
		t.Fatal("no reload after a config file was added to the watched directory")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
