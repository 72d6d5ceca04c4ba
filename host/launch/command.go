package launch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// platform holds the facts about an OS that command resolution and
// environment building depend on. The launcher uses hostPlatform; tests
// build one per OS so that every OS's rules run on any machine.
type platform struct {
	// goos is "windows", "darwin", "linux", ...
	goos string
	// stat inspects a file (os.Stat on the real host).
	stat func(string) (fs.FileInfo, error)
	// hostEnv reads the host's environment (os.LookupEnv on the real
	// host; case-insensitive on Windows).
	hostEnv func(string) (string, bool)
}

func hostPlatform() platform {
	return platform{goos: runtime.GOOS, stat: os.Stat, hostEnv: os.LookupEnv}
}

func (p platform) windows() bool { return p.goos == "windows" }

// defaultPathExt is what Windows uses when PATHEXT is unset.
const defaultPathExt = ".COM;.EXE;.BAT;.CMD"

// resolveCommand returns the program to execute for command.
//
// On Unix, a name containing a slash is taken as a path (relative to dir,
// as exec does); a bare name is searched in env's PATH, or in the host's
// PATH when env has none; the file must be executable.
//
// On Windows, a name containing \ / or a drive letter is a path; a bare
// name is searched in PATH (the current directory is not searched, unlike
// cmd.exe). A name without an extension is tried with each PATHEXT
// extension in order (npx finds npx.cmd, never the extensionless Unix shim
// npm installs beside it); a name with a PATHEXT extension is used as
// written; any other extension (server.py) is refused, because Windows
// cannot execute it directly.
//
// On every OS, relative PATH entries are skipped: they would resolve
// against the host's working directory, which is not what the server's
// author meant. Errors show the PATH searched and never any other variable.
func (p platform) resolveCommand(server, command string, env []string, dir string) (string, error) {
	if command == "" {
		return "", fmt.Errorf("%w %q: no command given; set command to the program to run", ErrStart, server)
	}
	if !p.windows() {
		if isWindowsAbsPath(command) {
			return "", fmt.Errorf("%w %q: command %q is a Windows path, but this host runs %s; set command to a program on this machine (a bare name such as \"npx\" is looked up in PATH)",
				ErrStart, server, command, p.goos)
		}
	}
	searchPath, ok := p.envValue(env, "PATH")
	if !ok {
		searchPath, _ = p.hostEnv("PATH")
	}
	if p.isPath(command) {
		path := command
		if !p.isAbs(path) && dir != "" {
			path = p.join(dir, path)
		}
		return p.findInDir(server, command, path, env, true)
	}
	var notExecutable error
	for _, d := range strings.Split(searchPath, p.listSeparator()) {
		d = strings.Trim(d, `"`) // Windows allows quoted PATH entries
		if d == "" || !p.isAbs(d) {
			continue
		}
		path, err := p.findInDir(server, command, p.join(d, command), env, false)
		if err == nil {
			return path, nil
		}
		if errors.Is(err, errNotExecutable) && notExecutable == nil {
			notExecutable = err
		}
		if errors.Is(err, errUnrunnableExtension) {
			return "", err
		}
	}
	if notExecutable != nil {
		return "", notExecutable
	}
	shown := searchPath
	if shown == "" {
		shown = "PATH is empty"
	}
	hint := "set command to an absolute path or add its directory to PATH"
	if p.windows() {
		hint += fmt.Sprintf(" (names without an extension are tried with PATHEXT: %s)", p.pathExt(env))
	} else if ext := strings.ToLower(p.ext(command)); ext == ".cmd" || ext == ".bat" || ext == ".exe" {
		hint = fmt.Sprintf("%s names a Windows program, but this host runs %s: drop the extension (npx.cmd is npx here)", command, p.goos)
	}
	return "", fmt.Errorf("%w %q: command %q not found in PATH (%s); %s", ErrStart, server, command, shown, hint)
}

var (
	errNotExecutable       = errors.New("not an executable file")
	errUnrunnableExtension = errors.New("extension Windows cannot run")
	errNoSuchFile          = errors.New("no such file")
)

// findInDir checks the candidates for path (with PATHEXT on Windows) and
// returns the first that exists and can run. explicit marks a path the
// user wrote (its errors name it) rather than a PATH candidate.
func (p platform) findInDir(server, command, path string, env []string, explicit bool) (string, error) {
	candidates := []string{path}
	if p.windows() {
		exts := p.pathExts(env)
		ext := strings.ToLower(p.ext(path))
		switch {
		case ext == "":
			candidates = candidates[:0]
			for _, e := range exts {
				candidates = append(candidates, path+e)
			}
		case !containsFold(exts, ext):
			if _, err := p.stat(path); err == nil || explicit {
				return "", fmt.Errorf("%w %q: command %q has the extension %s, which Windows cannot run directly (PATHEXT is %s); run it through its interpreter, e.g. command = \"python\", args = [\"server.py\"]: %w",
					ErrStart, server, command, ext, p.pathExt(env), errUnrunnableExtension)
			}
			return "", errNoSuchFile
		}
	}
	for _, c := range candidates {
		info, err := p.stat(c)
		switch {
		case errors.Is(err, fs.ErrNotExist) || (err == nil && info.IsDir() && !explicit):
			continue
		case err != nil:
			if explicit {
				return "", fmt.Errorf("%w %q: inspect command %q: %w", ErrStart, server, c, err)
			}
			continue
		case info.IsDir() || (!p.windows() && info.Mode().Perm()&0o111 == 0):
			hint := "make it executable (chmod +x) or set command to another program"
			if p.windows() {
				hint = "set command to a program file"
			}
			return "", fmt.Errorf("%w %q: command %q resolves to %s, which is not an executable file; %s: %w",
				ErrStart, server, command, c, hint, errNotExecutable)
		}
		return c, nil
	}
	if explicit {
		shown := path
		if len(candidates) > 1 || candidates[0] != path {
			shown = strings.Join(candidates, ", ")
		}
		return "", fmt.Errorf("%w %q: command %q does not exist (tried %s); set command to an existing program", ErrStart, server, command, shown)
	}
	return "", errNoSuchFile
}

// isWindowsAbsPath reports C:\x, C:/x and \\server\share paths, whatever
// the host OS.
func isWindowsAbsPath(s string) bool {
	if strings.HasPrefix(s, `\\`) {
		return true
	}
	return len(s) >= 3 && s[1] == ':' && (s[2] == '\\' || s[2] == '/') &&
		(('a' <= s[0] && s[0] <= 'z') || ('A' <= s[0] && s[0] <= 'Z'))
}

func (p platform) isPath(command string) bool {
	if p.windows() {
		return strings.ContainsAny(command, `\/:`)
	}
	return strings.ContainsRune(command, '/')
}

func (p platform) isAbs(path string) bool {
	if p.windows() {
		return isWindowsAbsPath(path)
	}
	return strings.HasPrefix(path, "/")
}

func (p platform) join(dir, name string) string {
	if p.windows() {
		return strings.TrimRight(dir, `\/`) + `\` + name
	}
	return filepath.Join(dir, name)
}

func (p platform) listSeparator() string {
	if p.windows() {
		return ";"
	}
	return ":"
}

// ext is the extension of path's last element, with the dot.
func (p platform) ext(path string) string {
	base := path
	if i := strings.LastIndexAny(path, p.separators()); i >= 0 {
		base = path[i+1:]
	}
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		return base[i:]
	}
	return ""
}

func (p platform) separators() string {
	if p.windows() {
		return `\/:`
	}
	return "/"
}

// pathExt is the PATHEXT the child sees (falling back to the host's and
// then to Windows' default).
func (p platform) pathExt(env []string) string {
	if v, ok := p.envValue(env, "PATHEXT"); ok && v != "" {
		return v
	}
	if v, ok := p.hostEnv("PATHEXT"); ok && v != "" {
		return v
	}
	return defaultPathExt
}

// pathExts are PATHEXT's extensions, each with its dot.
func (p platform) pathExts(env []string) []string {
	var exts []string
	for e := range strings.SplitSeq(p.pathExt(env), ";") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if !strings.HasPrefix(e, ".") {
			e = "." + e
		}
		exts = append(exts, e)
	}
	return exts
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// envValue returns the value of name in env; the last entry wins, as it
// does for exec. Names are case-insensitive on Windows.
func (p platform) envValue(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		k, v, ok := strings.Cut(env[i], "=")
		if !ok {
			continue
		}
		if k == name || (p.windows() && strings.EqualFold(k, name)) {
			return v, true
		}
	}
	return "", false
}

// isBatchFile reports a .cmd or .bat script, which Windows runs through
// cmd.exe.
func isBatchFile(path string) bool {
	ext := strings.ToLower(platform{goos: "windows"}.ext(path))
	return ext == ".cmd" || ext == ".bat"
}

// batchCommandLine is the command line that runs a .cmd/.bat script through
// cmd.exe: `"<comspec>" /d /s /c ""<script>" "<arg>" ..."`. /d skips
// AutoRun commands, /s makes cmd.exe strip exactly the outer quotes.
//
// cmd.exe re-parses that line with its own rules, so an argument holding
// one of " % ! ^ & | < > or a line break could change what runs (or be
// mangled): such an argument is refused with an error that names it by
// position (values may be secrets), rather than escaped and hoped for.
func batchCommandLine(server, comspec, script string, args []string) (string, error) {
	if strings.ContainsAny(script, "\"%!^&|<>\r\n") {
		return "", fmt.Errorf("%w %q: the path of the batch file %q holds characters cmd.exe interprets; move it to a plain path", ErrStart, server, script)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `"%s" /d /s /c ""%s"`, comspec, script)
	for i, a := range args {
		if strings.ContainsAny(a, "\"%!^&|<>\r\n") {
			return "", fmt.Errorf("%w %q: argument %d holds one of \" %% ! ^ & | < > or a line break, which cmd.exe would interpret when running the batch file %s; "+
				"run the program behind the shim directly (for npx: command = \"node\" with the package's script) or drop those characters",
				ErrStart, server, i+1, script)
		}
		fmt.Fprintf(&b, ` "%s"`, a)
	}
	b.WriteString(`"`)
	return b.String(), nil
}
