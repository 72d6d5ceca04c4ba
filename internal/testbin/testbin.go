package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// packages maps a binary name to the package that builds it, read from
// binaries.list at the repository root: the list `make build` and the
// container image build from, so a test builds what users run.
var packages = sync.OnceValues(func() (map[string]string, error) {
	list := filepath.Join(Root(), "binaries.list")
	b, err := os.ReadFile(list)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) < 2 {
			return nil, fmt.Errorf("%s:%d: want \"name package [image]\", got %q", list, i+1, line)
		}
		m[f[0]] = f[1]
	}
	return m, nil
})

var (
	mu      sync.Mutex
	built   = map[string]string{}
	tempDir string
)

// Path returns the path of the named binary, building it if needed.
func Path(t testing.TB, name string) string {
	t.Helper()
	p, err := path(name)
	if err != nil {
		t.Fatalf("getting binary %s: %v", name, err)
	}
	return p
}

func path(name string) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[name]; ok {
		return p, nil
	}
	if dir := os.Getenv("TOOLGATE_BIN"); dir != "" {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("TOOLGATE_BIN=%s has no %s (run make build): %w", dir, name, err)
		}
		built[name] = p
		return p, nil
	}
	pkgs, err := packages()
	if err != nil {
		return "", err
	}
	pkg, ok := pkgs[name]
	if !ok {
		return "", fmt.Errorf("no package known for binary %q; add it to binaries.list", name)
	}
	if tempDir == "" {
		d, err := os.MkdirTemp("", "toolgate-testbin-")
		if err != nil {
			return "", err
		}
		tempDir = d
	}
	out := filepath.Join(tempDir, name)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = Root()
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	built[name] = out
	return out, nil
}

// Root returns the repository root.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Cleanup removes binaries built into the temporary directory. Call it
// from TestMain after m.Run.
func Cleanup() {
	mu.Lock()
	defer mu.Unlock()
	if tempDir != "" {
		_ = os.RemoveAll(tempDir)
		tempDir = ""
		built = map[string]string{}
	}
}

// Interop returns the directory of the pinned npm referees
// (testplugins/interop, with node_modules installed). When TOOLGATE_INTEROP
// is set — `make test` sets it after `npm ci` — a missing install fails the
// test. Without it (a bare `go test`), the test is skipped with a message
// that says how to run it: nothing is skipped silently.
func Interop(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("TOOLGATE_INTEROP")
	strict := dir != ""
	if dir == "" {
		dir = filepath.Join(Root(), "testplugins", "interop")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".bin", "node")); err != nil {
		if strict {
			t.Fatalf("TOOLGATE_INTEROP=%s has no installed referees (run make interop): %v", dir, err)
		}
		t.Skipf("SKIPPED: the npm referees are not installed in %s; run `make interop` or `make test` to include this test", dir)
	}
	return dir
}

// Program returns the path of a system program a test drives as a
// referee, such as the OpenSSH client. `make test` makes sure of these
// before it sets TOOLGATE_INTEROP (see its referee targets), so when that
// is set a missing program fails the test; a bare `go test` skips it with
// a message that says what to install (install names the package).
func Program(t testing.TB, name, install string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("TOOLGATE_INTEROP") != "" {
		t.Fatalf("%s is missing (%v): install %s; `make test` installs it itself only as root with apt-get", name, err, install)
	}
	t.Skipf("SKIPPED LOUDLY: this test needs %s (%v); install %s, or run `make test`, to include it", name, err, install)
	return ""
}

// Node returns the pinned Node 22 binary of the interop install.
func Node(t testing.TB) string {
	return filepath.Join(Interop(t), "node_modules", ".bin", "node")
}

// EverythingServer returns the argv that runs @modelcontextprotocol/server-everything.
func EverythingServer(t testing.TB, args ...string) []string {
	dir := Interop(t)
	return append([]string{
		filepath.Join(dir, "node_modules", ".bin", "node"),
		filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"),
	}, args...)
}

// Main runs a package's tests for its TestMain, removes binaries built on
// demand, and fails the run when the tests leaked goroutines (compared with
// the goroutines that existed before they ran). Use it as
//
//	func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }
func Main(m *testing.M, opts ...goleak.Option) int {
	opts = append(opts, goleak.IgnoreCurrent())
	code := m.Run()
	Cleanup()
	if code == 0 {
		if err := goleak.Find(opts...); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	return code
}
