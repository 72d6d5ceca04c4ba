package mcpdemo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxBigBytes bounds the big tool so a typo cannot exhaust memory.
const maxBigBytes = 256 << 20

// Input-request keys of the elicitation tools; a retry carries the answer
// under the same key.
const (
	elicitFormKey = "form"
	elicitURLKey  = "url"
)

// ElicitURL is the URL the elicit_url tool asks the client to open.
const ElicitURL = "https://example.invalid/mcp-demo/authorize"

// ElicitFormSchema is the form the elicit tool requests: name (string,
// default "anon"), age (integer) and color (red, green or blue).
func ElicitFormSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name":  map[string]any{"type": "string", "default": "anon", "description": "your name"},
			"age":   map[string]any{"type": "integer", "description": "your age in years"},
			"color": map[string]any{"type": "string", "enum": []any{"red", "green", "blue"}, "description": "favourite colour"},
		},
	}
}

func readOnly() *mcp.ToolAnnotations { return &mcp.ToolAnnotations{ReadOnlyHint: true} }

func hint(v bool) *bool { return &v }

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

func jsonResult(v any) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	return textResult(string(b)), nil
}

type echoInput struct {
	Text string `json:"text" jsonschema:"text to return unchanged"`
}

type addInput struct {
	A float64 `json:"a" jsonschema:"first addend"`
	B float64 `json:"b" jsonschema:"second addend"`
}

type addOutput struct {
	Sum float64 `json:"sum" jsonschema:"a + b"`
}

type writeFileInput struct {
	Path    string `json:"path" jsonschema:"file path relative to the server root"`
	Content string `json:"content" jsonschema:"text to write"`
}

type pathInput struct {
	Path string `json:"path" jsonschema:"file path relative to the server root"`
}

type messageInput struct {
	Message string `json:"message,omitempty" jsonschema:"text shown to the user or returned as the error"`
}

type msInput struct {
	Ms int `json:"ms" jsonschema:"milliseconds to sleep"`
}

type stepsInput struct {
	Steps int `json:"steps" jsonschema:"number of progress notifications to send"`
}

type envInput struct {
	Names []string `json:"names" jsonschema:"environment variable names to report"`
}

type bigInput struct {
	Bytes int `json:"bytes" jsonschema:"exact size of the returned text in bytes"`
}

type dataInput struct {
	Data string `json:"data" jsonschema:"text to return unchanged"`
}

type mutateInput struct {
	Add    []string `json:"add,omitempty" jsonschema:"names of tools to add (each returns ok)"`
	Remove []string `json:"remove,omitempty" jsonschema:"names of tools to remove"`
}

type weatherOutput struct {
	City         string  `json:"city"`
	TemperatureC float64 `json:"temperature_c"`
	Conditions   string  `json:"conditions"`
}

// SlowTiming is the JSON text the slow tools return.
type SlowTiming struct {
	Start int64 `json:"start"` // unix nanos when the handler started waiting
	End   int64 `json:"end"`   // unix nanos when it stopped
	PID   int   `json:"pid"`
}

func (d *Demo) registerDefaultTools() {
	s := d.server
	mcp.AddTool(s, d.decorate(&mcp.Tool{Name: "echo", Description: "Return the given text unchanged.", Annotations: readOnly()}),
		func(_ context.Context, _ *mcp.CallToolRequest, in echoInput) (*mcp.CallToolResult, any, error) {
			return textResult(in.Text), nil, nil
		})
	mcp.AddTool(s, d.decorate(&mcp.Tool{Name: "add", Description: "Add two numbers and return the sum as text and as structured content.", Annotations: readOnly()}),
		func(_ context.Context, _ *mcp.CallToolRequest, in addInput) (*mcp.CallToolResult, addOutput, error) {
			sum := in.A + in.B
			return textResult(strconv.FormatFloat(sum, 'f', -1, 64)), addOutput{Sum: sum}, nil
		})
	mcp.AddTool(s, d.decorate(&mcp.Tool{
		Name:        "write_file",
		Description: "Write text to a file under the server root, creating parent directories.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: hint(false), OpenWorldHint: hint(false)},
	}), d.writeFile)
	mcp.AddTool(s, d.decorate(&mcp.Tool{
		Name:        "delete_file",
		Description: "Delete a file under the server root.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: hint(true)},
	}), d.deleteFile)
	d.registerContentTools()
	mcp.AddTool(s, d.decorate(&mcp.Tool{Name: "fail", Description: "Return a tool error (isError) carrying the given message.", Annotations: readOnly()}),
		func(_ context.Context, _ *mcp.CallToolRequest, in messageInput) (*mcp.CallToolResult, any, error) {
			msg := in.Message
			if msg == "" {
				msg = "failure requested"
			}
			res := textResult(msg)
			res.IsError = true
			return res, nil, nil
		})
	mcp.AddTool(s, d.decorate(&mcp.Tool{Name: "slow", Description: "Sleep for ms milliseconds (read-only) and report start and end times.", Annotations: readOnly()}), slow)
	mcp.AddTool(s, d.decorate(&mcp.Tool{Name: "slow_write", Description: "Sleep for ms milliseconds like slow, but without annotations, so hosts must treat it as a write."}), slow)
	mcp.AddTool(s, d.decorate(&mcp.Tool{Name: "progress", Description: "Send steps progress notifications, then return.", Annotations: readOnly()}), progress)
	mcp.AddTool(s, d.decorate(&mcp.Tool{Name: "elicit", Description: "Ask the user for name, age and favourite colour with a form elicitation.", Annotations: readOnly()}), elicitForm)
	mcp.AddTool(s, d.decorate(&mcp.Tool{Name: "elicit_url", Description: "Ask the user to visit a URL with a URL-mode elicitation.", Annotations: readOnly()}), elicitURL)
	mcp.AddTool(s, d.decorate(&mcp.Tool{Name: "env", Description: "Report the named environment variables and the working directory as the server sees them.", Annotations: readOnly()}),
		func(_ context.Context, _ *mcp.CallToolRequest, in envInput) (*mcp.CallToolResult, any, error) {
			out := map[string]any{}
			for _, name := range in.Names {
				if v, ok := os.LookupEnv(name); ok {
					out[name] = v
				} else {
					out[name] = nil
				}
			}
			cwd, err := os.Getwd()
			if err != nil {
				return nil, nil, fmt.Errorf("get working directory: %w", err)
			}
			out["cwd"] = cwd
			res, err := jsonResult(out)
			return res, nil, err
		})
	mcp.AddTool(s, d.decorate(&mcp.Tool{Name: "pid", Description: "Report the server's process id and parent process id.", Annotations: readOnly()}),
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			res, err := jsonResult(map[string]int{"pid": os.Getpid(), "ppid": os.Getppid()})
			return res, nil, err
		})
	mcp.AddTool(s, d.decorate(&mcp.Tool{Name: "big", Description: "Return one text block of exactly the requested number of bytes.", Annotations: readOnly()}),
		func(_ context.Context, _ *mcp.CallToolRequest, in bigInput) (*mcp.CallToolResult, any, error) {
			if in.Bytes < 0 || in.Bytes > maxBigBytes {
				return nil, nil, fmt.Errorf("bytes %d is out of range; pass 0..%d", in.Bytes, maxBigBytes)
			}
			return textResult(BigText(in.Bytes)), nil, nil
		})
	mcp.AddTool(s, d.decorate(&mcp.Tool{Name: "echo_big", Description: "Return the data argument unchanged, for large round trips.", Annotations: readOnly()}),
		func(_ context.Context, _ *mcp.CallToolRequest, in dataInput) (*mcp.CallToolResult, any, error) {
			return textResult(in.Data), nil, nil
		})
	mcp.AddTool(s, d.decorate(&mcp.Tool{Name: "mutate_tools", Description: "Add or remove tools at runtime; each change is announced with notifications/tools/list_changed."}), d.mutateTools)
}

func (d *Demo) registerContentTools() {
	s := d.server
	mcp.AddTool(s, d.decorate(&mcp.Tool{Name: "image", Description: "Return a small PNG image and a caption.", Annotations: readOnly()}),
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{imageContent(), &mcp.TextContent{Text: "a 2x2 PNG: red, green, blue, white"}}}, nil, nil
		})
	mcp.AddTool(s, d.decorate(&mcp.Tool{Name: "audio", Description: "Return a short WAV audio clip.", Annotations: readOnly()}),
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{audioContent()}}, nil, nil
		})
	mcp.AddTool(s, d.decorate(&mcp.Tool{Name: "resource_link", Description: "Return a link to a resource.", Annotations: readOnly()}),
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{resourceLinkContent()}}, nil, nil
		})
	mcp.AddTool(s, d.decorate(&mcp.Tool{Name: "embedded_resource", Description: "Return an embedded text resource.", Annotations: readOnly()}),
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{embeddedResourceContent()}}, nil, nil
		})
	mcp.AddTool(s, d.decorate(&mcp.Tool{Name: "structured", Description: "Return a weather report as structured content with an output schema.", Annotations: readOnly()}),
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, weatherOutput, error) {
			out := weatherOutput{City: "Paris", TemperatureC: 21.5, Conditions: "sunny"}
			return textResult("Paris: 21.5 C, sunny"), out, nil
		})
	mcp.AddTool(s, d.decorate(&mcp.Tool{Name: "mixed", Description: "Return text, image, audio, a resource link and an embedded resource together.", Annotations: readOnly()}),
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "mixed content follows"},
				imageContent(),
				audioContent(),
				resourceLinkContent(),
				embeddedResourceContent(),
			}}, nil, nil
		})
}

func imageContent() *mcp.ImageContent {
	return &mcp.ImageContent{Data: DemoPNG(), MIMEType: "image/png"}
}

func audioContent() *mcp.AudioContent {
	return &mcp.AudioContent{Data: DemoWAV(), MIMEType: "audio/wav"}
}

func resourceLinkContent() *mcp.ResourceLink {
	size := int64(len("hello from mcp-demo\n"))
	return &mcp.ResourceLink{
		URI:         "mcp-demo://docs/readme.txt",
		Name:        "readme.txt",
		Title:       "mcp-demo readme",
		Description: "A text file the demo server links to.",
		MIMEType:    "text/plain",
		Size:        &size,
	}
}

func embeddedResourceContent() *mcp.EmbeddedResource {
	return &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
		URI:      "mcp-demo://notes/embedded.txt",
		MIMEType: "text/plain",
		Text:     "embedded hello from mcp-demo",
	}}
}

// openRoot opens --root (or the working directory) as an os.Root, which
// refuses every path that leaves it, symlinks included.
func (d *Demo) openRoot() (*os.Root, error) {
	dir := d.cfg.Root
	if dir == "" {
		dir = "."
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open root %q: %w; pass an existing directory to --root", dir, err)
	}
	return root, nil
}

func (d *Demo) writeFile(_ context.Context, _ *mcp.CallToolRequest, in writeFileInput) (*mcp.CallToolResult, any, error) {
	root, err := d.openRoot()
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	if dir := filepath.Dir(in.Path); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return nil, nil, fmt.Errorf("write %q: %w; use a path inside %s", in.Path, err, root.Name())
		}
	}
	if err := root.WriteFile(in.Path, []byte(in.Content), 0o644); err != nil {
		return nil, nil, fmt.Errorf("write %q: %w; use a path inside %s", in.Path, err, root.Name())
	}
	return textResult(fmt.Sprintf("wrote %d bytes to %s", len(in.Content), in.Path)), nil, nil
}

func (d *Demo) deleteFile(_ context.Context, _ *mcp.CallToolRequest, in pathInput) (*mcp.CallToolResult, any, error) {
	root, err := d.openRoot()
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	if err := root.Remove(in.Path); err != nil {
		return nil, nil, fmt.Errorf("delete %q: %w; use an existing file inside %s", in.Path, err, root.Name())
	}
	return textResult("deleted " + in.Path), nil, nil
}

func slow(ctx context.Context, _ *mcp.CallToolRequest, in msInput) (*mcp.CallToolResult, any, error) {
	if in.Ms < 0 {
		return nil, nil, fmt.Errorf("ms %d is negative; pass 0 or more", in.Ms)
	}
	start := time.Now()
	timer := time.NewTimer(time.Duration(in.Ms) * time.Millisecond)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return nil, nil, fmt.Errorf("slow call cancelled: %w", context.Cause(ctx))
	case <-timer.C:
	}
	res, err := jsonResult(SlowTiming{Start: start.UnixNano(), End: time.Now().UnixNano(), PID: os.Getpid()})
	return res, nil, err
}

func progress(ctx context.Context, req *mcp.CallToolRequest, in stepsInput) (*mcp.CallToolResult, any, error) {
	token := req.Params.GetProgressToken()
	if token == nil {
		return textResult(fmt.Sprintf("no progress token in the request; sent 0 of %d notifications", in.Steps)), nil, nil
	}
	for i := 1; i <= in.Steps; i++ {
		err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      float64(i),
			Total:         float64(in.Steps),
			Message:       fmt.Sprintf("step %d of %d", i, in.Steps),
		})
		if err != nil {
			return nil, nil, fmt.Errorf("send progress %d of %d: %w", i, in.Steps, err)
		}
	}
	return textResult(fmt.Sprintf("sent %d progress notifications", in.Steps)), nil, nil
}

// ElicitOutcome is the JSON text the elicitation tools return.
type ElicitOutcome struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content"`
}

// elicitForm and elicitURL use multi-round-trip input requests: a
// 2026-07-28 client answers them and retries the call; for older clients
// go-sdk's server middleware turns them into elicitation/create requests
// and re-runs the handler with the answers. One code path serves both.
func elicitForm(_ context.Context, req *mcp.CallToolRequest, in messageInput) (*mcp.CallToolResult, any, error) {
	if answer, ok := req.Params.InputResponses[elicitFormKey]; ok {
		return elicitOutcome(answer)
	}
	msg := in.Message
	if msg == "" {
		msg = "Tell mcp-demo about yourself."
	}
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{elicitFormKey: &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: ElicitFormSchema()}},
		RequestState:  "mcp-demo-elicit-form",
	}, nil, nil
}

func elicitURL(_ context.Context, req *mcp.CallToolRequest, in messageInput) (*mcp.CallToolResult, any, error) {
	if answer, ok := req.Params.InputResponses[elicitURLKey]; ok {
		return elicitOutcome(answer)
	}
	msg := in.Message
	if msg == "" {
		msg = "Open the page to authorize mcp-demo."
	}
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{elicitURLKey: &mcp.ElicitParams{Mode: "url", Message: msg, URL: ElicitURL, ElicitationID: "mcp-demo-url-1"}},
		RequestState:  "mcp-demo-elicit-url",
	}, nil, nil
}

func elicitOutcome(answer mcp.InputResponse) (*mcp.CallToolResult, any, error) {
	er, ok := answer.(*mcp.ElicitResult)
	if !ok || er == nil {
		return nil, nil, errors.New("elicitation answer is not an elicitation result; the client answered a different request")
	}
	res, err := jsonResult(ElicitOutcome{Action: er.Action, Content: er.Content})
	return res, nil, err
}

func (d *Demo) mutateTools(_ context.Context, _ *mcp.CallToolRequest, in mutateInput) (*mcp.CallToolResult, any, error) {
	for _, name := range append(append([]string{}, in.Add...), in.Remove...) {
		if name == "" {
			return nil, nil, errors.New("tool name is empty; pass non-empty names in add and remove")
		}
	}
	for _, name := range in.Add {
		d.addOKTool(name, "Added at runtime by mutate_tools.")
	}
	if len(in.Remove) > 0 {
		d.server.RemoveTools(in.Remove...)
	}
	res, err := jsonResult(map[string][]string{"added": nonNil(in.Add), "removed": nonNil(in.Remove)})
	return res, nil, err
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
