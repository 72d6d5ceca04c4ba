package launch

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuildEnv(t *testing.T) {
	t.Parallel()
	host := map[string]string{
		"HOME": "/home/u", "PATH": "/usr/bin", "LANG": "C.UTF-8", "TZ": "",
		"PROJECT_ROOT": "/src", "GITHUB_TOKEN": "ghp_secret", "OTHER": "x",
	}
	lookup := func(k string) (string, bool) { v, ok := host[k]; return v, ok }
	local := func(name string) EnvVar { return EnvVar{Name: name} }
	remote := func(name string) EnvVar { return EnvVar{Name: name, Remote: true} }

	tests := []struct {
		name    string
		vars    []EnvVar
		env     map[string]string
		remote  bool
		want    []string
		wantErr string
	}{
		{
			name: "allowlist only, set variables only, sorted",
			want: []string{"HOME=/home/u", "LANG=C.UTF-8", "PATH=/usr/bin", "TZ="},
		},
		{
			name: "env_vars copied when set",
			vars: []EnvVar{local("PROJECT_ROOT"), {Name: "GITHUB_TOKEN"}, local("UNSET_VAR")},
			want: []string{"GITHUB_TOKEN=ghp_secret", "HOME=/home/u", "LANG=C.UTF-8", "PATH=/usr/bin", "PROJECT_ROOT=/src", "TZ="},
		},
		{
			name: "literal env wins",
			vars: []EnvVar{local("PROJECT_ROOT")},
			env:  map[string]string{"PATH": "/opt/bin", "PROJECT_ROOT": "/override", "MODE": "test"},
			want: []string{"HOME=/home/u", "LANG=C.UTF-8", "MODE=test", "PATH=/opt/bin", "PROJECT_ROOT=/override", "TZ="},
		},
		{
			name:    "remote source in local mode",
			vars:    []EnvVar{remote("GITHUB_TOKEN")},
			wantErr: `env_vars entry "GITHUB_TOKEN" uses source "remote", which needs an environment whose launcher runs elsewhere`,
		},
		{
			name:   "remote mode: explicit entries only",
			vars:   []EnvVar{local("PROJECT_ROOT"), remote("GITHUB_TOKEN"), local("UNSET_VAR")},
			env:    map[string]string{"MODE": "test"},
			remote: true,
			want:   []string{"MODE=test", "PROJECT_ROOT=/src"},
		},
		{
			name:    "invalid env_vars name",
			vars:    []EnvVar{local("A=B")},
			wantErr: `env_vars entry "A=B" is not a valid variable name`,
		},
		{
			name:    "invalid env name",
			env:     map[string]string{"": "v"},
			wantErr: `env entry "" is not a valid variable name`,
		},
		{
			name:    "NUL in a literal value",
			env:     map[string]string{"TOKEN": "ghp_\x00secret"},
			wantErr: `env entry "TOKEN" has a value containing a NUL byte`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := BuildEnv(lookup, tt.vars, tt.env, tt.remote)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("BuildEnv = %q, want error containing %q", got, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %q, want it to contain %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Fatalf("error %q leaks a value", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("env (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildEnvNilLookupReadsHost(t *testing.T) { // not parallel: sets the host environment
	t.Setenv("TOOLGATE_LAUNCH_TEST_VAR", "from-host")
	got, err := BuildEnv(nil, []EnvVar{{Name: "TOOLGATE_LAUNCH_TEST_VAR"}}, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"TOOLGATE_LAUNCH_TEST_VAR=from-host"}, got); diff != "" {
		t.Fatalf("env (-want +got):\n%s", diff)
	}
}

func TestRemoteEnvNames(t *testing.T) {
	t.Parallel()
	vars := []EnvVar{
		{Name: "B", Remote: true},
		{Name: "LOCAL"},
		{Name: "A", Remote: true},
		{Name: "B", Remote: true},
		{Name: "DEFAULT"},
	}
	if diff := cmp.Diff([]string{"B", "A"}, RemoteEnvNames(vars)); diff != "" {
		t.Fatalf("remote names (-want +got):\n%s", diff)
	}
}

func TestLocalRefusesRemoteEnv(t *testing.T) {
	_, err := NewLocal(LocalOptions{}).Launch(t.Context(), Spec{Server: "s", Command: "true", RemoteEnv: []string{"TOKEN"}})
	if !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), `source = "remote"`) {
		t.Fatalf("Launch = %v", err)
	}
}
