package reviewer

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/plugins/guardian/internal/llm"
	"github.com/toolgate/toolgate/plugins/guardian/internal/rules"
	"github.com/toolgate/toolgate/plugins/internal/configdiag"
	"github.com/toolgate/toolgate/plugins/internal/hostlist"
	"github.com/toolgate/toolgate/plugins/internal/pathscope"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/guardian"
)

// Engine names, as written in the config.
const (
	EngineRules = "rules"
	EngineLLM   = "llm"
)

func schema() sdk.ConfigSchema {
	return sdk.ConfigSchema{
		Attributes: []sdk.Attribute{
			{Name: "engine", Type: sdk.TypeString, Default: json.RawMessage(`"rules"`),
				Description: `"rules" (deterministic risk scoring) or "llm" (an OpenAI-compatible chat-completions endpoint).`},
			{Name: "threshold", Type: sdk.TypeString, Default: json.RawMessage(`"high"`),
				Description: `rules: the lowest risk that is denied: "medium", "high" or "critical".`},
			{Name: "workspace", Type: sdk.TypeString,
				Description: "rules: the directory calls may write in; paths outside it raise the risk. Default: the plugin's working directory (the host's)."},
			{Name: "allowed_hosts", Type: sdk.ListOf(sdk.TypeString),
				Description: `rules: network hosts calls may reach ("api.github.com", "*.example.com"); other URLs are high risk. Unset: URLs are medium risk.`},
			{Name: "endpoint", Type: sdk.TypeString,
				Description: `llm: the chat-completions URL, or its base such as "http://localhost:11434/v1".`},
			{Name: "model", Type: sdk.TypeString, Description: "llm: the model name."},
			{Name: "api_key_env", Type: sdk.TypeString,
				Description: "llm: the environment variable holding the API key (the host must pass it to the plugin)."},
			{Name: "timeout", Type: sdk.TypeString, Default: json.RawMessage(`"90s"`),
				Description: "llm: the total budget of one review, retries included."},
			{Name: "max_attempts", Type: sdk.TypeNumber, Default: json.RawMessage(`3`),
				Description: "llm: attempts per review; only 408, 429, 5xx and network errors are retried."},
			{Name: "instructions", Type: sdk.TypeString,
				Description: "llm: your policy, appended to the reviewer's system prompt."},
		},
		Blocks: []sdk.NestedBlock{
			{TypeName: "server", Nesting: sdk.NestingMap, Description: "rules: per-server trust, labelled with the server block's name.",
				Block: sdk.ConfigSchema{Attributes: []sdk.Attribute{
					{Name: "trust", Type: sdk.TypeString, Required: true,
						Description: `"high" lowers the risk of the server's calls one level, "low" raises it, "normal" leaves it.`},
				}}},
		},
	}
}

type configJSON struct {
	Engine       *string               `json:"engine"`
	Threshold    *string               `json:"threshold"`
	Workspace    *string               `json:"workspace"`
	AllowedHosts *[]string             `json:"allowed_hosts"`
	Endpoint     *string               `json:"endpoint"`
	Model        *string               `json:"model"`
	APIKeyEnv    *string               `json:"api_key_env"`
	Timeout      *string               `json:"timeout"`
	MaxAttempts  *float64              `json:"max_attempts"`
	Instructions *string               `json:"instructions"`
	Server       map[string]serverJSON `json:"server"`
}

type serverJSON struct {
	Trust *string `json:"trust"`
}

// engine is what reviews a call: package rules or package llm.
type engine interface {
	Review(ctx context.Context, a guardian.Action) (guardian.Verdict, error)
}

// compile checks the configuration and builds the engine it selects.
func (r *Reviewer) compile(raw json.RawMessage, diags *configdiag.Set) *engineBox {
	var cfg configJSON
	if !configdiag.Decode(diags, raw, &cfg) {
		return nil
	}
	name := deref(cfg.Engine)
	if name == "" {
		name = EngineRules
	}
	var e engine
	switch name {
	case EngineRules:
		e = r.compileRules(cfg, diags)
		for attr, set := range map[string]bool{"endpoint": cfg.Endpoint != nil, "model": cfg.Model != nil, "api_key_env": cfg.APIKeyEnv != nil, "instructions": cfg.Instructions != nil} {
			if set {
				diags.Warning(configdiag.Path(attr), "Attribute ignored by the rules engine",
					fmt.Sprintf(`%s is only used with engine = "llm"; remove it or switch the engine.`, attr))
			}
		}
	case EngineLLM:
		e = r.compileLLM(cfg, diags)
	default:
		diags.Error(configdiag.Path("engine"), "Unknown engine",
			fmt.Sprintf(`engine must be "rules" or "llm", not %q.`, name))
	}
	if diags.HasErrors() {
		return nil
	}
	return &engineBox{name: name, engine: e}
}

func (r *Reviewer) compileRules(cfg configJSON, diags *configdiag.Set) engine {
	rc := rules.Config{Trust: map[string]rules.Trust{}}
	switch t := deref(cfg.Threshold); t {
	case "", "high":
		rc.Threshold = guardian.RiskHigh
	case "medium":
		rc.Threshold = guardian.RiskMedium
	case "critical":
		rc.Threshold = guardian.RiskCritical
	default:
		diags.Error(configdiag.Path("threshold"), "Unknown threshold",
			fmt.Sprintf(`threshold must be "medium", "high" or "critical", not %q (risk "low" is always allowed).`, t))
	}
	rc.Home, _ = os.UserHomeDir()
	workspace := deref(cfg.Workspace)
	if workspace == "" {
		workspace = "."
	}
	cwd, _ := os.Getwd()
	resolved, err := pathscope.Resolve(workspace, cwd, rc.Home)
	if err != nil {
		diags.Error(configdiag.Path("workspace"), "Invalid workspace",
			fmt.Sprintf("workspace %q cannot be resolved: %v. Give an absolute directory.", workspace, err))
	} else if info, err := os.Stat(resolved); err != nil || !info.IsDir() {
		diags.Error(configdiag.Path("workspace"), "Workspace is not a directory",
			fmt.Sprintf("workspace %q (%s) is not an existing directory; relative paths are resolved against the directory toolgate runs in.", workspace, resolved))
	}
	rc.Workspace = resolved
	if cfg.AllowedHosts != nil {
		hosts, err := hostlist.Parse(*cfg.AllowedHosts)
		if err != nil {
			diags.Error(configdiag.Path("allowed_hosts"), "Invalid host", "allowed_hosts "+err.Error()+".")
		}
		rc.AllowedHosts = &hosts
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Server)) {
		switch t := deref(cfg.Server[name].Trust); t {
		case "high":
			rc.Trust[name] = rules.TrustHigh
		case "low":
			rc.Trust[name] = rules.TrustLow
		case "normal", "":
		default:
			diags.Error(configdiag.Path("server", name, "trust"), "Unknown trust",
				fmt.Sprintf(`trust must be "high", "normal" or "low", not %q.`, t))
		}
	}
	return rules.New(rc)
}

func (r *Reviewer) compileLLM(cfg configJSON, diags *configdiag.Set) engine {
	lc := llm.Config{Model: deref(cfg.Model), Instructions: deref(cfg.Instructions)}
	endpoint := strings.TrimSpace(deref(cfg.Endpoint))
	u, err := url.Parse(endpoint)
	switch {
	case endpoint == "":
		diags.Error(configdiag.Path("endpoint"), "Missing endpoint",
			`engine = "llm" needs endpoint, the chat-completions URL or its base, e.g. "http://localhost:11434/v1" (Ollama) or "https://api.openai.com/v1".`)
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		diags.Error(configdiag.Path("endpoint"), "Invalid endpoint",
			fmt.Sprintf("endpoint %q is not an http(s) URL such as \"http://localhost:11434/v1\".", endpoint))
	}
	lc.Endpoint = endpoint
	if strings.TrimSpace(lc.Model) == "" {
		diags.Error(configdiag.Path("model"), "Missing model",
			`engine = "llm" needs model, the name the endpoint knows the model by (e.g. "llama3.1:8b" or "gpt-4.1-mini").`)
	}
	if env := deref(cfg.APIKeyEnv); env != "" {
		lc.APIKey = os.Getenv(env)
		if lc.APIKey == "" {
			diags.Error(configdiag.Path("api_key_env"), "API key not set",
				fmt.Sprintf("The environment variable %s is empty or not passed to the plugin. Set it, and make sure the plugin block passes it to the plugin process.", env))
		} else if u != nil && u.Scheme == "http" && !loopback(u.Hostname()) {
			diags.Warning(configdiag.Path("endpoint"), "API key sent without TLS",
				fmt.Sprintf("endpoint %q is plain http to a non-loopback host, so the API key travels unencrypted; use https.", endpoint))
		}
	}
	lc.Budget = configdiag.Duration(diags, configdiag.Path("timeout"), cfg.Timeout, llm.DefaultBudget)
	lc.MaxAttempts = llm.DefaultMaxAttempts
	if cfg.MaxAttempts != nil {
		n := *cfg.MaxAttempts
		if n != float64(int(n)) || n < 1 || n > 10 {
			diags.Error(configdiag.Path("max_attempts"), "Invalid attempt count",
				fmt.Sprintf("max_attempts must be a whole number from 1 to 10, not %v.", n))
		} else {
			lc.MaxAttempts = int(n)
		}
	}
	if cfg.Threshold != nil || cfg.AllowedHosts != nil || len(cfg.Server) > 0 {
		diags.Warning(nil, "Rules settings ignored by the llm engine",
			`threshold, workspace, allowed_hosts and server blocks are only used with engine = "rules"; describe your policy to the model with instructions instead.`)
	}
	return llm.New(lc, llm.Options{HTTPClient: r.opts.HTTPClient, Backoff: r.opts.Backoff, Logger: r.logger.Named("llm")})
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
