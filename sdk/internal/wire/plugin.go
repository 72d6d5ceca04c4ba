package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/internal/pb/pluginv1"
)

// PluginServer serves PluginService for one plugin of any kind.
type PluginServer struct {
	pluginv1.UnimplementedPluginServiceServer

	// Kind is the plugin's kind.
	Kind sdk.Kind
	// Impl is the kind's implementation; it may implement sdk.Identifier
	// and sdk.Configurer.
	Impl any
	// Capabilities are the kind's own capabilities ("configure" is added
	// when Impl is a Configurer).
	Capabilities []string
	// APIVersions overrides the advertised API versions; nil means
	// [sdk.APIVersion].
	APIVersions []string
	// Logger receives panics of Impl; nil discards them.
	Logger hclog.Logger
}

// Info describes the plugin.
func (s *PluginServer) Info(context.Context, *pluginv1.InfoRequest) (resp *pluginv1.InfoResponse, err error) {
	defer Recover(s.Logger, "Info", &err)
	info := s.info()
	return InfoToPB(info), nil
}

func (s *PluginServer) info() sdk.Info {
	id := sdk.Identity{Name: filepath.Base(os.Args[0])}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "(devel)" {
		id.Version = bi.Main.Version
	}
	if ider, ok := s.Impl.(sdk.Identifier); ok {
		id = ider.Identity()
	}
	info := sdk.Info{
		Name:         id.Name,
		Kind:         s.Kind,
		Version:      id.Version,
		APIVersions:  s.APIVersions,
		Capabilities: append([]string{}, s.Capabilities...),
	}
	if info.APIVersions == nil {
		info.APIVersions = []string{sdk.APIVersion}
	}
	if c, ok := s.Impl.(sdk.Configurer); ok {
		schema := c.ConfigSchema()
		info.ConfigSchema = &schema
		info.Capabilities = append(info.Capabilities, sdk.CapabilityConfigure)
	}
	return info
}

// Configure hands the configuration to Impl.
func (s *PluginServer) Configure(ctx context.Context, req *pluginv1.ConfigureRequest) (resp *pluginv1.ConfigureResponse, err error) {
	defer Recover(s.Logger, "Configure", &err)
	config := json.RawMessage(req.GetConfigJson())
	c, ok := s.Impl.(sdk.Configurer)
	if !ok {
		if isEmptyObject(config) {
			return &pluginv1.ConfigureResponse{}, nil
		}
		return &pluginv1.ConfigureResponse{Diagnostics: DiagnosticsToPB([]sdk.Diagnostic{{
			Severity: sdk.SeverityError,
			Summary:  "plugin takes no configuration",
			Detail:   "This plugin declares no config schema; remove the config block from its plugin block.",
		}})}, nil
	}
	if len(bytes.TrimSpace(config)) == 0 {
		config = json.RawMessage("{}")
	}
	if !json.Valid(config) {
		return nil, InvalidRequest("config_json is not valid JSON")
	}
	return &pluginv1.ConfigureResponse{Diagnostics: DiagnosticsToPB(c.Configure(ctx, config))}, nil
}

func isEmptyObject(config json.RawMessage) bool {
	trimmed := bytes.TrimSpace(config)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return true
	}
	var m map[string]json.RawMessage
	return json.Unmarshal(trimmed, &m) == nil && len(m) == 0
}

// PluginClient calls PluginService on behalf of a kind's host-side client.
type PluginClient struct {
	rpc    pluginv1.PluginServiceClient
	exited context.Context
	kind   sdk.Kind
}

// NewPluginClient returns a client of the plugin behind conn, expected to
// be of kind; exited is done once the plugin process exited (nil: never).
func NewPluginClient(conn grpc.ClientConnInterface, exited context.Context, kind sdk.Kind) PluginClient {
	return PluginClient{rpc: pluginv1.NewPluginServiceClient(conn), exited: exited, kind: kind}
}

// Info calls Info and checks the answer.
func (c PluginClient) Info(ctx context.Context) (sdk.Info, error) {
	resp, err := c.rpc.Info(ctx, &pluginv1.InfoRequest{})
	if err != nil {
		return sdk.Info{}, fmt.Errorf("calling plugin Info: %w", FromRPC(ctx, err, c.exited))
	}
	info, err := InfoFromPB(resp)
	if err != nil {
		return sdk.Info{}, fmt.Errorf("calling plugin Info: %w", err)
	}
	if info.Kind != c.kind {
		return sdk.Info{}, fmt.Errorf("calling plugin Info: %w", BadResponse(
			"the plugin is a %s, not a %s; set kind = %q in its plugin block or use a %s plugin",
			info.Kind, c.kind, info.Kind, c.kind))
	}
	return info, nil
}

// Configure calls Configure and checks the answer.
func (c PluginClient) Configure(ctx context.Context, config json.RawMessage) ([]sdk.Diagnostic, error) {
	resp, err := c.rpc.Configure(ctx, &pluginv1.ConfigureRequest{ConfigJson: config, ApiVersion: sdk.APIVersion})
	if err != nil {
		return nil, fmt.Errorf("calling plugin Configure: %w", FromRPC(ctx, err, c.exited))
	}
	diags, err := DiagnosticsFromPB(resp.GetDiagnostics())
	if err != nil {
		return nil, fmt.Errorf("calling plugin Configure: %w", err)
	}
	return diags, nil
}

// InfoToPB converts a plugin's description for the wire.
func InfoToPB(info sdk.Info) *pluginv1.InfoResponse {
	resp := &pluginv1.InfoResponse{
		Name:          info.Name,
		Kind:          kindToPB[info.Kind],
		PluginVersion: info.Version,
		ApiVersions:   info.APIVersions,
		Capabilities:  info.Capabilities,
	}
	if info.ConfigSchema != nil {
		resp.ConfigSchema = schemaToPB(*info.ConfigSchema)
	}
	return resp
}

var kindToPB = map[sdk.Kind]pluginv1.Kind{
	sdk.KindHook:     pluginv1.Kind_KIND_HOOK,
	sdk.KindGuardian: pluginv1.Kind_KIND_GUARDIAN,
	sdk.KindLauncher: pluginv1.Kind_KIND_LAUNCHER,
}

var kindFromPB = map[pluginv1.Kind]sdk.Kind{
	pluginv1.Kind_KIND_HOOK:     sdk.KindHook,
	pluginv1.Kind_KIND_GUARDIAN: sdk.KindGuardian,
	pluginv1.Kind_KIND_LAUNCHER: sdk.KindLauncher,
}

// InfoFromPB checks and converts a plugin's description.
func InfoFromPB(resp *pluginv1.InfoResponse) (sdk.Info, error) {
	kind, ok := kindFromPB[resp.GetKind()]
	if !ok {
		return sdk.Info{}, BadResponse("unknown plugin kind %d", resp.GetKind())
	}
	info := sdk.Info{
		Name:         resp.GetName(),
		Kind:         kind,
		Version:      resp.GetPluginVersion(),
		APIVersions:  resp.GetApiVersions(),
		Capabilities: resp.GetCapabilities(),
	}
	if resp.ConfigSchema != nil {
		schema, err := schemaFromPB(resp.ConfigSchema, nil)
		if err != nil {
			return sdk.Info{}, err
		}
		info.ConfigSchema = &schema
	}
	return info, nil
}

var nestingToPB = map[sdk.Nesting]pluginv1.Nesting{
	sdk.NestingSingle: pluginv1.Nesting_NESTING_SINGLE,
	sdk.NestingList:   pluginv1.Nesting_NESTING_LIST,
	sdk.NestingMap:    pluginv1.Nesting_NESTING_MAP,
}

var nestingFromPB = map[pluginv1.Nesting]sdk.Nesting{
	pluginv1.Nesting_NESTING_SINGLE: sdk.NestingSingle,
	pluginv1.Nesting_NESTING_LIST:   sdk.NestingList,
	pluginv1.Nesting_NESTING_MAP:    sdk.NestingMap,
}

func schemaToPB(s sdk.ConfigSchema) *pluginv1.ConfigSchema {
	out := &pluginv1.ConfigSchema{}
	for _, a := range s.Attributes {
		out.Attributes = append(out.Attributes, &pluginv1.Attribute{
			Name:        a.Name,
			Type:        a.Type,
			Required:    a.Required,
			Description: a.Description,
			DefaultJson: a.Default,
		})
	}
	for _, b := range s.Blocks {
		out.Blocks = append(out.Blocks, &pluginv1.NestedBlock{
			TypeName:    b.TypeName,
			Nesting:     nestingToPB[b.Nesting], // an unknown Go value goes out as UNSPECIFIED and is refused by the host
			Block:       schemaToPB(b.Block),
			Description: b.Description,
		})
	}
	return out
}

// schemaFromPB checks and converts a schema; path names the block for
// errors.
func schemaFromPB(s *pluginv1.ConfigSchema, path []string) (sdk.ConfigSchema, error) {
	var out sdk.ConfigSchema
	for _, a := range s.GetAttributes() {
		where := append(append([]string{}, path...), a.GetName())
		if a.GetName() == "" {
			return sdk.ConfigSchema{}, BadResponse("config schema %v: attribute without a name", path)
		}
		if !json.Valid([]byte(a.GetType())) {
			return sdk.ConfigSchema{}, BadResponse("config schema %v: type %q is not a JSON cty type", where, a.GetType())
		}
		if len(a.GetDefaultJson()) > 0 && !json.Valid(a.GetDefaultJson()) {
			return sdk.ConfigSchema{}, BadResponse("config schema %v: default is not valid JSON", where)
		}
		out.Attributes = append(out.Attributes, sdk.Attribute{
			Name:        a.GetName(),
			Type:        a.GetType(),
			Required:    a.GetRequired(),
			Description: a.GetDescription(),
			Default:     nilIfEmpty(a.GetDefaultJson()),
		})
	}
	for _, b := range s.GetBlocks() {
		where := append(append([]string{}, path...), b.GetTypeName())
		if b.GetTypeName() == "" {
			return sdk.ConfigSchema{}, BadResponse("config schema %v: nested block without a type name", path)
		}
		nesting, ok := nestingFromPB[b.GetNesting()]
		if !ok {
			return sdk.ConfigSchema{}, BadResponse("config schema %v: unknown nesting %d", where, b.GetNesting())
		}
		inner, err := schemaFromPB(b.GetBlock(), where)
		if err != nil {
			return sdk.ConfigSchema{}, err
		}
		out.Blocks = append(out.Blocks, sdk.NestedBlock{
			TypeName:    b.GetTypeName(),
			Nesting:     nesting,
			Block:       inner,
			Description: b.GetDescription(),
		})
	}
	return out, nil
}

func nilIfEmpty(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return b
}

var severityToPB = map[sdk.Severity]pluginv1.Severity{
	sdk.SeverityError:   pluginv1.Severity_SEVERITY_ERROR,
	sdk.SeverityWarning: pluginv1.Severity_SEVERITY_WARNING,
}

var severityFromPB = map[pluginv1.Severity]sdk.Severity{
	pluginv1.Severity_SEVERITY_ERROR:   sdk.SeverityError,
	pluginv1.Severity_SEVERITY_WARNING: sdk.SeverityWarning,
}

// DiagnosticsToPB converts diagnostics for the wire.
func DiagnosticsToPB(diags []sdk.Diagnostic) []*pluginv1.Diagnostic {
	out := make([]*pluginv1.Diagnostic, 0, len(diags))
	for _, d := range diags {
		out = append(out, &pluginv1.Diagnostic{
			Severity:      severityToPB[d.Severity],
			Summary:       d.Summary,
			Detail:        d.Detail,
			AttributePath: d.AttributePath,
		})
	}
	return out
}

// DiagnosticsFromPB checks and converts diagnostics.
func DiagnosticsFromPB(diags []*pluginv1.Diagnostic) ([]sdk.Diagnostic, error) {
	var out []sdk.Diagnostic
	for _, d := range diags {
		sev, ok := severityFromPB[d.GetSeverity()]
		if !ok {
			return nil, BadResponse("diagnostic %q has unknown severity %d", d.GetSummary(), d.GetSeverity())
		}
		out = append(out, sdk.Diagnostic{
			Severity:      sev,
			Summary:       d.GetSummary(),
			Detail:        d.GetDetail(),
			AttributePath: d.GetAttributePath(),
		})
	}
	return out, nil
}

// AnnotationsToPB converts tool annotations; nil stays nil.
func AnnotationsToPB(a *sdk.Annotations) *pluginv1.ToolAnnotations {
	if a == nil {
		return nil
	}
	return &pluginv1.ToolAnnotations{
		ReadOnly:    a.ReadOnly,
		Destructive: a.Destructive,
		OpenWorld:   a.OpenWorld,
		Idempotent:  a.Idempotent,
		Title:       a.Title,
	}
}

// AnnotationsFromPB converts tool annotations; nil stays nil.
func AnnotationsFromPB(a *pluginv1.ToolAnnotations) *sdk.Annotations {
	if a == nil {
		return nil
	}
	return &sdk.Annotations{
		ReadOnly:    a.GetReadOnly(),
		Destructive: a.Destructive,
		OpenWorld:   a.OpenWorld,
		Idempotent:  a.GetIdempotent(),
		Title:       a.GetTitle(),
	}
}

// Recover turns a panic of a plugin implementation into a status error for
// the host, logging the stack, so that one bad call does not take the
// process (and every other call in flight) down. Use it deferred, with the
// named error result of the handler.
func Recover(log hclog.Logger, method string, err *error) {
	v := recover()
	if v == nil {
		return
	}
	if log != nil {
		log.Error("plugin panicked", "method", method, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	}
	*err = Panicked(v)
}

// CallerToPB converts a caller; nil stays nil.
func CallerToPB(c *sdk.Caller) *pluginv1.Caller {
	if c == nil {
		return nil
	}
	return &pluginv1.Caller{
		Subject: c.Subject, Issuer: c.Issuer, ClientId: c.ClientID, Email: c.Email,
		Groups: c.Groups, Scopes: c.Scopes, Claims: c.Claims,
	}
}

// CallerFromPB converts a caller; an absent one (an older host, or no
// identity) is nil.
func CallerFromPB(c *pluginv1.Caller) *sdk.Caller {
	if c == nil {
		return nil
	}
	return &sdk.Caller{
		Subject: c.GetSubject(), Issuer: c.GetIssuer(), ClientID: c.GetClientId(), Email: c.GetEmail(),
		Groups: c.GetGroups(), Scopes: c.GetScopes(), Claims: c.GetClaims(),
	}
}
