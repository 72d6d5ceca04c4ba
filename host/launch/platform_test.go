package launch

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeFile is a file of a fake file system: these tests run every OS's
// rules on any machine.
type fakeFile struct {
	name string
	mode fs.FileMode
}

func (f fakeFile) Name() string       { return f.name }
func (f fakeFile) Size() int64        { return 0 }
func (f fakeFile) Mode() fs.FileMode  { return f.mode }
func (f fakeFile) ModTime() time.Time { return time.Time{} }
func (f fakeFile) IsDir() bool        { return f.mode.IsDir() }
func (f fakeFile) Sys() any           { return nil }

// fakePlatform is goos with the given files (path -> mode) and host
// environment. On Windows, paths and variable names match case-insensitively,
// as they do there.
func fakePlatform(goos string, files map[string]fs.FileMode, host map[string]string) platform {
	fold := func(s string) string {
		if goos == "windows" {
			return strings.ToLower(s)
		}
		return s
	}
	folded := map[string]fs.FileMode{}
	for p, m := range files {
		folded[fold(p)] = m
	}
	return platform{
		goos: goos,
		stat: func(p string) (fs.FileInfo, error) {
			if goos == "windows" {
				p = strings.ReplaceAll(p, "/", `\`) // Windows accepts both
			}
			m, ok := folded[fold(p)]
			if !ok {
				return nil, fs.ErrNotExist
			}
			return fakeFile{name: p, mode: m}, nil
		},
		hostEnv: func(name string) (string, bool) {
			for k, v := range host {
				if fold(k) == fold(name) {
					return v, true
				}
			}
			return "", false
		},
	}
}

func TestResolveCommandOnWindows(t *testing.T) {
	files := map[string]fs.FileMode{
		`C:\node\npx`:        0o644, // the extensionless Unix shim npm installs beside npx.cmd
		`C:\node\npx.cmd`:    0o644,
		`C:\node\node.exe`:   0o644,
		`C:\tools\srv.exe`:   0o644,
		`C:\tools\both.exe`:  0o644,
		`C:\tools\both.cmd`:  0o644,
		`C:\work\bin\s.exe`:  0o644,
		`C:\tools\server.py`: 0o644,
		`C:\tools\dir.exe`:   fs.ModeDir | 0o755,
	}
	host := map[string]string{"Path": `C:\tools`, "PATHEXT": ".COM;.EXE;.BAT;.CMD"}
	p := fakePlatform("windows", files, host)
	tests := []struct {
		name, command, dir string
		env                []string
		want               string   // resolved path, or
		wantErr            []string // substrings of the error
	}{
		{name: "npx finds npx.cmd, not the Unix shim", command: "npx", env: []string{`PATH=C:\node`}, want: `C:\node\npx.cmd`},
		{name: "variable names are case-insensitive", command: "npx", env: []string{`Path=C:\node`}, want: `C:\node\npx.cmd`},
		{name: "quoted PATH entries", command: "node", env: []string{`PATH="C:\node";C:\tools`}, want: `C:\node\node.exe`},
		{name: "explicit extension kept", command: "node.exe", env: []string{`PATH=C:\node`}, want: `C:\node\node.exe`},
		{name: "PATHEXT order decides", command: "both", env: []string{`PATH=C:\tools`, "PATHEXT=.CMD;.EXE"}, want: `C:\tools\both.cmd`},
		{name: "host PATH when the child has none", command: "srv", want: `C:\tools\srv.exe`},
		{name: "absolute Windows path", command: `C:\tools\srv.exe`, want: `C:\tools\srv.exe`},
		{name: "absolute path with forward slashes", command: `C:/tools/srv.exe`, want: `C:/tools/srv.exe`},
		{name: "absolute path without extension", command: `C:\tools\srv`, want: `C:\tools\srv.exe`},
		{name: "relative path against cwd", command: `bin\s.exe`, dir: `C:\work`, want: `C:\work\bin\s.exe`},
		{name: "relative PATH entries skipped", command: "srv", env: []string{`PATH=tools;.`}, wantErr: []string{`command "srv" not found in PATH (tools;.)`, "PATHEXT: .COM;.EXE;.BAT;.CMD"}},
		{name: "script Windows cannot run", command: `C:\tools\server.py`, wantErr: []string{"extension .py", `command = "python"`}},
		{name: "script found in PATH", command: "server.py", wantErr: []string{"extension .py", "interpreter"}},
		{name: "missing absolute path lists what was tried", command: `C:\tools\nope`, wantErr: []string{`C:\tools\nope.COM`, `C:\tools\nope.CMD`, "does not exist"}},
		{name: "directory", command: `C:\tools\dir.exe`, wantErr: []string{"not an executable file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// File names are case-insensitive on Windows.
			got, err := p.resolveCommand("s", tt.command, tt.env, tt.dir)
			checkResolved(t, strings.ToLower(got), err, strings.ToLower(tt.want), tt.wantErr)
		})
	}
}

func TestResolveCommandOnUnix(t *testing.T) {
	files := map[string]fs.FileMode{
		"/usr/bin/npx":       0o755,
		"/usr/bin/notes.txt": 0o644,
		"/srv/app/run":       0o755,
	}
	for _, goos := range []string{"linux", "darwin"} {
		p := fakePlatform(goos, files, map[string]string{"PATH": "/usr/bin"})
		tests := []struct {
			name, command, dir string
			want               string
			wantErr            []string
		}{
			{name: "bare name", command: "npx", want: "/usr/bin/npx"},
			{name: "relative path against cwd", command: "./run", dir: "/srv/app", want: "/srv/app/run"},
			{name: "Windows path", command: `C:\tools\srv.exe`, wantErr: []string{"is a Windows path, but this host runs " + goos, "set command to a program on this machine"}},
			{name: "UNC path", command: `\\server\share\srv.exe`, wantErr: []string{"is a Windows path"}},
			{name: "cmd shim", command: "npx.cmd", wantErr: []string{"npx.cmd names a Windows program", "drop the extension"}},
			{name: "not executable", command: "notes.txt", wantErr: []string{"not an executable file", "chmod +x"}},
		}
		for _, tt := range tests {
			t.Run(goos+"/"+tt.name, func(t *testing.T) {
				got, err := p.resolveCommand("s", tt.command, nil, tt.dir)
				checkResolved(t, got, err, tt.want, tt.wantErr)
			})
		}
	}
}

func checkResolved(t *testing.T, got string, err error, want string, wantErr []string) {
	t.Helper()
	if wantErr == nil {
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("resolved %q, want %q", got, want)
		}
		return
	}
	if err == nil {
		t.Fatalf("resolved %q, want an error", got)
	}
	if !errors.Is(err, ErrStart) {
		t.Errorf("error %q does not match ErrStart", err)
	}
	for _, s := range wantErr {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
}

func TestBuildEnvPerOS(t *testing.T) {
	host := map[string]string{
		"Path": `C:\Windows;C:\node`, "PATHEXT": ".COM;.EXE", "SystemRoot": `C:\Windows`, "COMSPEC": `C:\Windows\system32\cmd.exe`,
		"USERPROFILE": `C:\Users\ann`, "APPDATA": `C:\Users\ann\AppData\Roaming`, "TEMP": `C:\Temp`, "USERNAME": "ann",
		"HOME": "/home/ann", "API_KEY": "secret", "LANG": "C.UTF-8",
	}
	vars := []EnvVar{{Name: "api_key"}}
	env := map[string]string{"path": `C:\only`}

	win, err := fakePlatform("windows", nil, host).buildEnv(vars, env, false)
	if err != nil {
		t.Fatal(err)
	}
	// Names as Windows spells them in our allowlist, the literal's spelling
	// for what it overrides, one entry per case-insensitive name.
	wantWin := []string{
		"api_key=secret", `APPDATA=C:\Users\ann\AppData\Roaming`, `COMSPEC=C:\Windows\system32\cmd.exe`, `path=C:\only`,
		"PATHEXT=.COM;.EXE", `SYSTEMROOT=C:\Windows`, `TEMP=C:\Temp`, "USERNAME=ann", `USERPROFILE=C:\Users\ann`,
	}
	if diff := cmp.Diff(wantWin, win); diff != "" {
		t.Errorf("windows environment (-want +got):\n%s", diff)
	}

	unixHost := map[string]string{"PATH": "/usr/bin", "HOME": "/home/ann", "SYSTEMROOT": `C:\Windows`, "LANG": "C.UTF-8"}
	for _, goos := range []string{"linux", "darwin"} {
		got, err := fakePlatform(goos, nil, unixHost).buildEnv(nil, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"HOME=/home/ann", "LANG=C.UTF-8", "PATH=/usr/bin"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s environment (-want +got):\n%s", goos, diff)
		}
	}
}

func TestBatchCommandLine(t *testing.T) {
	got, err := batchCommandLine("s", `C:\Windows\system32\cmd.exe`, `C:\node\npx.cmd`, []string{"-y", "@scope/server", "C:\\data dir", ""})
	if err != nil {
		t.Fatal(err)
	}
	want := `"C:\Windows\system32\cmd.exe" /d /s /c ""C:\node\npx.cmd" "-y" "@scope/server" "C:\data dir" """`
	if got != want {
		t.Errorf("command line\n got %s\nwant %s", got, want)
	}
	const secret = "tok&calc.exe"
	_, err = batchCommandLine("s", "cmd.exe", `C:\node\npx.cmd`, []string{"--token", secret})
	if err == nil {
		t.Fatal("an argument with & reached cmd.exe")
	}
	for _, s := range []string{"argument 2", "cmd.exe would interpret", "run the program behind the shim directly"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("error %q shows the argument's value", err)
	}
}
