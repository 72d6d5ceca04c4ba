package command

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/toolgate/toolgate/plugins/internal/configdiag"
	"github.com/toolgate/toolgate/sdk"
)

// DefaultTimeout bounds one run of the program when the config sets none.
// The host's own per-hook timeout still applies on top.
const DefaultTimeout = 30 * time.Second

// inheritedEnv lists the only variables the program inherits from the
// plugin's environment.
var inheritedEnv = []string{"PATH", "HOME"}

func schema() sdk.ConfigSchema {
	return sdk.ConfigSchema{Attributes: []sdk.Attribute{
		{Name: "command", Type: sdk.ListOf(sdk.TypeString), Required: true,
			Description: `The program and its arguments, e.g. ["python3", "hooks/check.py"]; run directly, not through a shell. A bare program name is looked up in PATH.`},
		{Name: "env", Type: sdk.MapOf(sdk.TypeString),
			Description: "Extra environment variables for the program; it otherwise gets only PATH and HOME."},
		{Name: "timeout", Type: sdk.TypeString, Default: json.RawMessage(`"30s"`),
			Description: "How long one run may take before it is killed and counts as failed."},
		{Name: "matcher", Type: sdk.TypeString,
			Description: `Regular expression over tool_name (e.g. "^mcp__files__"); calls whose name does not match get no decision without running the program. Empty or "*": every tool.`},
	}}
}

type configJSON struct {
	Command []string          `json:"command"`
	Env     map[string]string `json:"env"`
	Timeout *string           `json:"timeout"`
	Matcher *string           `json:"matcher"`
}

// settings is one accepted configuration; it is immutable.
type settings struct {
	argv    []string
	env     []string
	secrets []string // env values, redacted from error texts
	timeout time.Duration
	matcher *regexp.Regexp // nil: every tool
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func compile(raw json.RawMessage, diags *configdiag.Set) *settings {
	var cfg configJSON
	if !configdiag.Decode(diags, raw, &cfg) {
		return nil
	}
	s := &settings{}
	switch {
	case len(cfg.Command) == 0:
		diags.Error(configdiag.Path("command"), "Missing command",
			`Set command to the program to run and its arguments, e.g. command = ["bash", "hooks/permission.sh"].`)
	case strings.TrimSpace(cfg.Command[0]) == "":
		diags.Error(configdiag.Path("command"), "Empty program name",
			"The first element of command is the program to run; it must not be empty.")
	default:
		program, err := locate(cfg.Command[0])
		if err != nil {
			diags.Error(configdiag.Path("command"), "Program not found", err.Error())
		}
		s.argv = append([]string{program}, cfg.Command[1:]...)
	}

	for _, name := range inheritedEnv {
		if v, ok := os.LookupEnv(name); ok {
			if _, overridden := cfg.Env[name]; !overridden {
				s.env = append(s.env, name+"="+v)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Env)) {
		if !envName.MatchString(name) {
			diags.Error(configdiag.Path("env", name), "Invalid environment variable name",
				fmt.Sprintf("%q is not a valid variable name: use letters, digits and underscores, not starting with a digit.", name))
			continue
		}
		value := cfg.Env[name]
		s.env = append(s.env, name+"="+value)
		if len(value) >= 4 { // shorter values would redact ordinary words
			s.secrets = append(s.secrets, value)
		}
	}

	s.timeout = configdiag.Duration(diags, configdiag.Path("timeout"), cfg.Timeout, DefaultTimeout)

	if m := strings.TrimSpace(deref(cfg.Matcher)); m != "" && m != "*" {
		re, err := regexp.Compile(m)
		if err != nil {
			diags.Error(configdiag.Path("matcher"), "Invalid regular expression",
				fmt.Sprintf("matcher = %q does not compile: %s. It is an RE2 expression over tool_name such as \"^mcp__files__.*\".", m, strings.TrimPrefix(err.Error(), "error parsing regexp: ")))
		}
		s.matcher = re
	}
	if diags.HasErrors() {
		return nil
	}
	return s
}

// locate resolves the program: a bare name through PATH, a relative path
// against the plugin's working directory (the host's), so that the file the
// user meant is checked now rather than at the first call.
func locate(program string) (string, error) {
	if !strings.ContainsRune(program, filepath.Separator) {
		path, err := exec.LookPath(program)
		if err != nil {
			return program, fmt.Errorf("%q is not in PATH (%v); give an absolute path or install it", program, err)
		}
		return path, nil
	}
	path, err := filepath.Abs(program)
	if err != nil {
		return program, fmt.Errorf("resolve %q: %v", program, err)
	}
	info, err := os.Stat(path)
	switch {
	case err != nil:
		return program, fmt.Errorf("%s: %v; relative paths are resolved against the directory toolgate runs in, so an absolute path is safer", path, err)
	case info.IsDir():
		return program, fmt.Errorf("%s is a directory, not a program", path)
	case info.Mode()&0o111 == 0:
		return program, fmt.Errorf("%s is not executable: chmod +x it, or run it through its interpreter (command = [\"bash\", %q])", path, program)
	}
	return path, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
