package executor

import (
	"github.com/toolgate/toolgate/internal/spelling"

	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/sdk"
)

// Executor names, the values of the executor attribute.
const (
	ExecutorLocal   = "local"
	ExecutorSSH     = "ssh"
	ExecutorDocker  = "docker"
	ExecutorKubectl = "kubectl"
	ExecutorNomad   = "nomad"
	ExecutorCustom  = "custom"
)

var executors = []string{ExecutorLocal, ExecutorSSH, ExecutorDocker, ExecutorKubectl, ExecutorNomad, ExecutorCustom}

// DefaultInheritEnv are the variables of the plugin's own environment that
// a local process (and every executor program) starts with unless
// inherit_env says otherwise: the host's allowlist for stdio servers.
var DefaultInheritEnv = []string{"HOME", "LOGNAME", "PATH", "SHELL", "USER", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ"}

// attribute is one attribute of the config block, with the executors it
// applies to (nil: all of them).
type attribute struct {
	sdk.Attribute
	executors []string
}

var remoteExecutors = []string{ExecutorSSH, ExecutorDocker, ExecutorKubectl, ExecutorNomad, ExecutorCustom}

var attributes = []attribute{
	{Attribute: sdk.Attribute{Name: "executor", Type: sdk.TypeString, Default: json.RawMessage(`"local"`),
		Description: `where servers run: "local", "ssh", "docker", "kubectl", "nomad" or "custom" (default "local")`}},
	{Attribute: sdk.Attribute{Name: "inherit_env", Type: sdk.ListOf(sdk.TypeString),
		Description: "names of the plugin's own environment variables that local processes and executor programs start with (default: HOME LOGNAME PATH SHELL USER LANG LC_ALL TERM TMPDIR TZ)"}},
	{Attribute: sdk.Attribute{Name: "executor_env", Type: sdk.MapOf(sdk.TypeString),
		Description: "variables for the executor program itself (SSH_AUTH_SOCK, KUBECONFIG, NOMAD_ADDR, DOCKER_HOST, ...), never passed on to the server"},
		executors: remoteExecutors},

	{Attribute: sdk.Attribute{Name: "sandbox_prefix", Type: sdk.ListOf(sdk.TypeString),
		Description: `local: an argv prefix the command runs under, e.g. ["bwrap", "--die-with-parent", "--ro-bind", "/", "/", "--"]`},
		executors: []string{ExecutorLocal}},

	{Attribute: sdk.Attribute{Name: "host", Type: sdk.TypeString,
		Description: "ssh: the host to connect to (a name from ~/.ssh/config works)"},
		executors: []string{ExecutorSSH}},
	{Attribute: sdk.Attribute{Name: "user", Type: sdk.TypeString,
		Description: "ssh: the login name (-l); docker: the user in the container (-u)"},
		executors: []string{ExecutorSSH, ExecutorDocker}},
	{Attribute: sdk.Attribute{Name: "port", Type: sdk.TypeNumber,
		Description: "ssh: the port (-p)"},
		executors: []string{ExecutorSSH}},
	{Attribute: sdk.Attribute{Name: "identity_file", Type: sdk.TypeString,
		Description: "ssh: the private key (-i, with IdentitiesOnly=yes)"},
		executors: []string{ExecutorSSH}},
	{Attribute: sdk.Attribute{Name: "known_hosts_file", Type: sdk.TypeString,
		Description: "ssh: UserKnownHostsFile"},
		executors: []string{ExecutorSSH}},
	{Attribute: sdk.Attribute{Name: "strict_host_key_checking", Type: sdk.TypeString,
		Description: `ssh: StrictHostKeyChecking, "yes", "accept-new" or "no"`},
		executors: []string{ExecutorSSH}},
	{Attribute: sdk.Attribute{Name: "options", Type: sdk.ListOf(sdk.TypeString),
		Description: `ssh: extra -o options, e.g. ["ConnectTimeout=10", "ServerAliveInterval=30"]`},
		executors: []string{ExecutorSSH}},
	{Attribute: sdk.Attribute{Name: "ssh", Type: sdk.TypeString,
		Description: `ssh: the ssh program (default "ssh")`},
		executors: []string{ExecutorSSH}},

	{Attribute: sdk.Attribute{Name: "container", Type: sdk.TypeString,
		Description: "docker: the running container (name or id); kubectl: the container in the pod (-c)"},
		executors: []string{ExecutorDocker, ExecutorKubectl}},
	{Attribute: sdk.Attribute{Name: "docker", Type: sdk.TypeString,
		Description: `docker: the docker program (default "docker"; podman works too)`},
		executors: []string{ExecutorDocker}},
	{Attribute: sdk.Attribute{Name: "shell", Type: sdk.TypeString,
		Description: `docker, kubectl, nomad: the POSIX shell inside the container that runs the start script (kubectl and nomad default "sh"; docker runs the command directly unless shell is set)`},
		executors: []string{ExecutorDocker, ExecutorKubectl, ExecutorNomad}},

	{Attribute: sdk.Attribute{Name: "pod", Type: sdk.TypeString,
		Description: "kubectl: the pod"},
		executors: []string{ExecutorKubectl}},
	{Attribute: sdk.Attribute{Name: "namespace", Type: sdk.TypeString,
		Description: "kubectl: the namespace (-n); nomad: the namespace (-namespace)"},
		executors: []string{ExecutorKubectl, ExecutorNomad}},
	{Attribute: sdk.Attribute{Name: "context", Type: sdk.TypeString,
		Description: "kubectl: the kubeconfig context (--context)"},
		executors: []string{ExecutorKubectl}},
	{Attribute: sdk.Attribute{Name: "kubectl", Type: sdk.TypeString,
		Description: `kubectl: the kubectl program (default "kubectl")`},
		executors: []string{ExecutorKubectl}},

	{Attribute: sdk.Attribute{Name: "alloc", Type: sdk.TypeString,
		Description: "nomad: the allocation id"},
		executors: []string{ExecutorNomad}},
	{Attribute: sdk.Attribute{Name: "task", Type: sdk.TypeString,
		Description: "nomad: the task in the allocation (-task)"},
		executors: []string{ExecutorNomad}},
	{Attribute: sdk.Attribute{Name: "nomad", Type: sdk.TypeString,
		Description: `nomad: the nomad program (default "nomad")`},
		executors: []string{ExecutorNomad}},

	{Attribute: sdk.Attribute{Name: "prefix", Type: sdk.ListOf(sdk.TypeString),
		Description: "custom: the argv template; placeholders {{command}}, {{args}}, {{env}}, {{dir}}, {{script}}; without {{command}} or {{script}} the command and args are appended"},
		executors: []string{ExecutorCustom}},
	{Attribute: sdk.Attribute{Name: "runs_locally", Type: sdk.TypeBool,
		Description: "custom: the prefix is a local wrapper that passes its environment and working directory on (the server's env and cwd become the wrapper's)"},
		executors: []string{ExecutorCustom}},
}

// Schema is the config schema the plugin declares: one flat block whose
// attributes apply to the executors their descriptions name.
func Schema() sdk.ConfigSchema {
	out := sdk.ConfigSchema{Attributes: make([]sdk.Attribute, len(attributes))}
	for i, a := range attributes {
		out.Attributes[i] = a.Attribute
	}
	return out
}

// Config is a validated configuration: the executor and its settings.
// It is immutable once built.
type Config struct {
	Executor    string
	InheritEnv  []string
	ExecutorEnv map[string]string

	SandboxPrefix []string // local

	Host                  string // ssh
	User                  string // ssh, docker
	Port                  int    // ssh; 0 = ssh's default
	IdentityFile          string
	KnownHostsFile        string
	StrictHostKeyChecking string
	Options               []string
	Program               string // ssh, docker, kubectl or nomad program; custom: prefix[0]

	Container string // docker, kubectl
	Shell     string // docker (optional), kubectl, nomad

	Pod       string // kubectl
	Namespace string // kubectl, nomad
	Context   string // kubectl

	Alloc string // nomad
	Task  string // nomad

	Prefix      []string // custom
	RunsLocally bool     // custom
}

// ParseConfig decodes and validates the JSON the host sends to Configure.
// It returns the configuration, or nil and the diagnostics that refuse it;
// warnings may come with a configuration.
func ParseConfig(raw json.RawMessage) (*Config, []sdk.Diagnostic) {
	d := &decoder{}
	fields := map[string]json.RawMessage{}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) != 0 && !bytes.Equal(trimmed, []byte("null")) {
		if err := json.Unmarshal(trimmed, &fields); err != nil {
			return nil, []sdk.Diagnostic{{
				Summary: "Invalid plugin configuration",
				Detail:  fmt.Sprintf("The host sent a configuration that is not a JSON object (%v); the host and the plugin are of different versions.", err),
			}}
		}
	}
	d.fields = fields
	known := map[string]attribute{}
	for _, a := range attributes {
		known[a.Name] = a
	}
	for _, name := range sortedKeys(fields) {
		if _, ok := known[name]; !ok {
			d.errorf([]string{name}, "Unsupported attribute",
				"launcher-exec has no attribute %q; the host and the plugin are of different versions, or the schema was not used to decode the block.", name)
		}
	}

	c := &Config{Executor: ExecutorLocal}
	if v, ok := d.str("executor"); ok {
		c.Executor = v
	}
	if !slices.Contains(executors, c.Executor) {
		d.errorf([]string{"executor"}, "Unknown executor",
			"executor must be one of %s, not %q.%s", quoteList(executors), c.Executor, didYouMean(c.Executor, executors))
		return nil, d.diags
	}
	for _, name := range sortedKeys(fields) {
		a, ok := known[name]
		if !ok || a.executors == nil || d.isNull(name) || slices.Contains(a.executors, c.Executor) {
			continue
		}
		d.errorf([]string{name}, "Attribute does not apply to this executor",
			"%s is a setting of the %s executor, and this block uses executor = %q; remove it.",
			name, strings.Join(a.executors, ", "), c.Executor)
	}

	c.InheritEnv = slices.Clone(DefaultInheritEnv)
	if v, ok := d.strList("inherit_env"); ok {
		c.InheritEnv = v
		for i, n := range v {
			if !validEnvName(n) {
				d.errorf([]string{"inherit_env", fmt.Sprint(i)}, "Invalid variable name",
					"%q is not a variable name; use names such as \"PATH\".", n)
			}
		}
	}
	if v, ok := d.strMap("executor_env"); ok {
		c.ExecutorEnv = v
		for _, n := range sortedKeys(v) {
			if !validEnvName(n) {
				d.errorf([]string{"executor_env", n}, "Invalid variable name",
					"%q is not a variable name; use names such as \"SSH_AUTH_SOCK\".", n)
			}
		}
	}

	switch c.Executor {
	case ExecutorLocal:
		c.SandboxPrefix, _ = d.strList("sandbox_prefix")
		d.noEmptyElements("sandbox_prefix", c.SandboxPrefix)
	case ExecutorSSH:
		c.parseSSH(d)
	case ExecutorDocker:
		c.Container = d.required("container", "the name or id of the running container, e.g. container = \"mcp-tools\"")
		c.User, _ = d.str("user")
		c.Program = d.program("docker")
		c.Shell, _ = d.str("shell")
	case ExecutorKubectl:
		c.Pod = d.required("pod", "the pod to exec in, e.g. pod = \"mcp-tools-0\"")
		c.Container, _ = d.str("container")
		c.Namespace, _ = d.str("namespace")
		c.Context, _ = d.str("context")
		c.Program = d.program("kubectl")
		c.Shell = d.shell()
	case ExecutorNomad:
		c.Alloc = d.required("alloc", "the allocation id, e.g. alloc = \"5b9f4c1e\"")
		c.Task, _ = d.str("task")
		c.Namespace, _ = d.str("namespace")
		c.Program = d.program("nomad")
		c.Shell = d.shell()
	case ExecutorCustom:
		c.parseCustom(d)
	}
	for _, name := range []string{"container", "pod", "alloc", "task", "namespace", "context", "user"} {
		if v, _ := d.str(name); strings.HasPrefix(v, "-") {
			d.errorf([]string{name}, "Value starts with a dash",
				"%s = %q would be read as an option by the executor; use the real name.", name, v)
		}
	}
	if sdk.HasErrors(d.diags) {
		return nil, d.diags
	}
	return c, d.diags
}

func (c *Config) parseSSH(d *decoder) {
	c.Host = d.required("host", "the host to connect to, e.g. host = \"build-1.example.com\"")
	if strings.HasPrefix(c.Host, "-") || strings.ContainsAny(c.Host, " \t\n") {
		d.errorf([]string{"host"}, "Invalid host", "host = %q is not a host name; use a name or address such as \"build-1\".", c.Host)
	}
	c.User, _ = d.str("user")
	if n, ok := d.integer("port"); ok {
		if n < 1 || n > 65535 {
			d.errorf([]string{"port"}, "Invalid port", "port must be between 1 and 65535, not %d.", n)
		}
		c.Port = n
	}
	c.IdentityFile, _ = d.str("identity_file")
	c.KnownHostsFile, _ = d.str("known_hosts_file")
	if v, ok := d.str("strict_host_key_checking"); ok {
		allowed := []string{"yes", "accept-new", "no"}
		if !slices.Contains(allowed, v) {
			d.errorf([]string{"strict_host_key_checking"}, "Invalid strict_host_key_checking",
				"strict_host_key_checking must be one of %s, not %q (\"ask\" cannot work: the executor never prompts).", quoteList(allowed), v)
		}
		c.StrictHostKeyChecking = v
	}
	c.Options, _ = d.strList("options")
	for i, o := range c.Options {
		key, value, ok := splitSSHOption(o)
		path := []string{"options", fmt.Sprint(i)}
		switch {
		case !ok:
			d.errorf(path, "Invalid ssh option", "%q is not an ssh option; write \"Key=value\", e.g. \"ConnectTimeout=10\".", o)
		case strings.EqualFold(key, "RequestTTY") && !strings.EqualFold(value, "no"):
			d.errorf(path, "TTY requested", "RequestTTY=%s would give the server a TTY, which corrupts MCP's byte stream; remove the option.", value)
		case strings.EqualFold(key, "BatchMode") && !strings.EqualFold(value, "yes"):
			d.errorf(path, "BatchMode disabled", "BatchMode=%s would let ssh prompt, and nobody can answer; set up a key (identity_file) instead.", value)
		}
	}
	c.Program = d.program("ssh")
}

// splitSSHOption splits "Key=value" or "Key value".
func splitSSHOption(o string) (key, value string, ok bool) {
	o = strings.TrimSpace(o)
	i := strings.IndexAny(o, "= \t")
	if i <= 0 || strings.HasPrefix(o, "-") {
		return "", "", false
	}
	return o[:i], strings.TrimSpace(o[i+1:]), true
}

func (c *Config) parseCustom(d *decoder) {
	prefix, ok := d.strList("prefix")
	if !ok || len(prefix) == 0 {
		d.errorf([]string{"prefix"}, "Missing prefix",
			`executor = "custom" needs prefix, the argv the command runs under, e.g. prefix = ["firejail", "--quiet", "--"] or ["lxc-attach", "-n", "box", "--", "{{command}}", "{{args}}"].`)
		return
	}
	d.noEmptyElements("prefix", prefix)
	if err := checkTemplate(prefix); err != nil {
		d.errorf(append([]string{"prefix"}, err.path...), "Invalid prefix template", "%s", err.msg)
	}
	if strings.Contains(prefix[0], "{{") {
		d.errorf([]string{"prefix", "0"}, "Invalid prefix template",
			"The first element of prefix is the program to run; it cannot be a placeholder.")
	}
	c.Prefix = prefix
	c.Program = prefix[0]
	c.RunsLocally, _ = d.boolean("runs_locally")
}

// decoder reads attributes out of the host's JSON and collects
// diagnostics.
type decoder struct {
	fields map[string]json.RawMessage
	diags  []sdk.Diagnostic
}

func (d *decoder) errorf(path []string, summary, format string, args ...any) {
	d.diags = append(d.diags, sdk.Diagnostic{Severity: sdk.SeverityError, Summary: summary,
		Detail: fmt.Sprintf(format, args...), AttributePath: path})
}

func (d *decoder) isNull(name string) bool {
	raw, ok := d.fields[name]
	return !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// decode unmarshals attribute name into v; it reports false when the
// attribute is absent or null, or has the wrong type (a diagnostic).
func (d *decoder) decode(name, want string, v any) bool {
	if d.isNull(name) {
		return false
	}
	if err := json.Unmarshal(d.fields[name], v); err != nil {
		d.errorf([]string{name}, "Invalid value", "%s must be %s.", name, want)
		return false
	}
	return true
}

func (d *decoder) str(name string) (string, bool) {
	var s string
	ok := d.decode(name, "a string", &s)
	return s, ok
}

func (d *decoder) strList(name string) ([]string, bool) {
	var s []string
	ok := d.decode(name, "a list of strings", &s)
	return s, ok
}

func (d *decoder) strMap(name string) (map[string]string, bool) {
	var m map[string]string
	ok := d.decode(name, "a map of strings", &m)
	return m, ok
}

func (d *decoder) boolean(name string) (bool, bool) {
	var b bool
	ok := d.decode(name, "true or false", &b)
	return b, ok
}

func (d *decoder) integer(name string) (int, bool) {
	var f float64
	if !d.decode(name, "a number", &f) {
		return 0, false
	}
	if f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		d.errorf([]string{name}, "Invalid value", "%s must be a whole number, not %v.", name, f)
		return 0, false
	}
	return int(f), true
}

func (d *decoder) required(name, example string) string {
	v, ok := d.str(name)
	if !ok || v == "" {
		if d.isNull(name) {
			d.errorf(nil, "Missing "+name, "This executor needs %s: %s.", name, example)
		} else if ok {
			d.errorf([]string{name}, "Empty "+name, "%s must not be empty: %s.", name, example)
		}
	}
	return v
}

// program is the executor's program attribute (named like the executor),
// defaulting to the executor's name.
func (d *decoder) program(name string) string {
	v, ok := d.str(name)
	if !ok || v == "" {
		return name
	}
	return v
}

func (d *decoder) shell() string {
	v, ok := d.str("shell")
	if !ok || v == "" {
		return "sh"
	}
	return v
}

func (d *decoder) noEmptyElements(name string, list []string) {
	for i, s := range list {
		if s == "" {
			d.errorf([]string{name, fmt.Sprint(i)}, "Empty argument", "%s must not contain empty strings; remove element %d.", name, i)
		}
	}
}

// validEnvName accepts what a process environment can hold as a name.
func validEnvName(n string) bool {
	return n != "" && !strings.ContainsAny(n, "=\x00")
}

// shellIdentifier reports whether n can be set with export in a POSIX
// shell.
func shellIdentifier(n string) bool {
	if n == "" {
		return false
	}
	for i, r := range n {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// didYouMean suggests the candidate closest to s, if one is close.
func didYouMean(s string, candidates []string) string {
	best := spelling.Closest(s, candidates)
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" Did you mean %q?", best)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
