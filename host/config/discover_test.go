package config

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestDiscover changes the working directory, so it must not run in
// parallel with anything.
func TestDiscover(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" || runtime.GOOS == "ios" || runtime.GOOS == "plan9" {
		t.Skip("the user config directory layout below is the XDG one")
	}
	root := t.TempDir()
	mk := func(rel string) string {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("# config\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	flagFile := mk("flag/custom.hcl")
	envFile := mk("env/from-env.hcl")
	cwdWith := filepath.Join(root, "cwd-with")
	cwdFile := mk("cwd-with/toolgate.hcl")
	cwdWithout := filepath.Join(root, "cwd-without")
	if err := os.MkdirAll(cwdWithout, 0o755); err != nil {
		t.Fatal(err)
	}
	xdgFile := mk("xdg/toolgate/config.hcl")
	homeFile := mk("home/.config/toolgate/config.hcl")
	emptyHome := filepath.Join(root, "empty-home")

	tests := []struct {
		name    string
		flag    string
		env     map[string]string
		cwd     string
		want    string
		wantErr []string
	}{
		{
			name: "flag wins over everything",
			flag: flagFile,
			env:  map[string]string{"TOOLGATE_CONFIG": envFile, "XDG_CONFIG_HOME": filepath.Join(root, "xdg")},
			cwd:  cwdWith,
			want: flagFile,
		},
		{
			name: "relative flag is made absolute",
			flag: "toolgate.hcl",
			cwd:  cwdWith,
			want: cwdFile,
		},
		{
			name:    "missing flag is an error, not a fall-through",
			flag:    filepath.Join(root, "nope.hcl"),
			env:     map[string]string{"TOOLGATE_CONFIG": envFile},
			cwd:     cwdWith,
			wantErr: []string{"nope.hcl (from --config) cannot be read", "Fix the path"},
		},
		{
			name: "TOOLGATE_CONFIG before ./toolgate.hcl",
			env:  map[string]string{"TOOLGATE_CONFIG": envFile},
			cwd:  cwdWith,
			want: envFile,
		},
		{
			name:    "missing TOOLGATE_CONFIG is an error",
			env:     map[string]string{"TOOLGATE_CONFIG": filepath.Join(root, "gone.hcl")},
			cwd:     cwdWith,
			wantErr: []string{"gone.hcl (from $TOOLGATE_CONFIG)", "unset $TOOLGATE_CONFIG"},
		},
		{
			name: "empty TOOLGATE_CONFIG counts as unset",
			env:  map[string]string{"TOOLGATE_CONFIG": ""},
			cwd:  cwdWith,
			want: cwdFile,
		},
		{
			name: "./toolgate.hcl before the user config dir",
			env:  map[string]string{"XDG_CONFIG_HOME": filepath.Join(root, "xdg")},
			cwd:  cwdWith,
			want: cwdFile,
		},
		{
			name: "XDG_CONFIG_HOME",
			env:  map[string]string{"XDG_CONFIG_HOME": filepath.Join(root, "xdg"), "HOME": filepath.Join(root, "home")},
			cwd:  cwdWithout,
			want: xdgFile,
		},
		{
			name: "HOME/.config without XDG_CONFIG_HOME",
			env:  map[string]string{"HOME": filepath.Join(root, "home")},
			cwd:  cwdWithout,
			want: homeFile,
		},
		{
			name: "nothing found lists every place and how to start",
			env:  map[string]string{"HOME": emptyHome},
			cwd:  cwdWithout,
			wantErr: []string{
				"--config (not given)",
				"$TOOLGATE_CONFIG (not set)",
				filepath.Join(cwdWithout, "toolgate.hcl"),
				filepath.Join(emptyHome, ".config", "toolgate", "config.hcl"),
				"copy config.hcl.example to ./toolgate.hcl, or pass --config PATH",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(tc.cwd)
			got, err := Discover(tc.flag, fakeEnv(tc.env))
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("Discover = %q, want an error", got)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Discover = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDiscoverNothingIsErrNoConfig(t *testing.T) {
	t.Chdir(t.TempDir())
	_, err := Discover("", fakeEnv(map[string]string{"HOME": t.TempDir(), "XDG_CONFIG_HOME": t.TempDir(), "AppData": t.TempDir()}))
	if !errors.Is(err, ErrNoConfig) {
		t.Errorf("err = %v, want ErrNoConfig", err)
	}
}
