package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
)

func TestFillDefaults(t *testing.T) {
	type schemaStruct struct {
		Type       string                    `json:"type"`
		Properties map[string]map[string]any `json:"properties"`
	}
	mapSchema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name":    map[string]any{"type": "string"},
			"color":   map[string]any{"type": "string", "default": "blue"},
			"count":   map[string]any{"type": "integer", "default": 3.0},
			"notify":  map[string]any{"type": "boolean", "default": false},
			"nothing": map[string]any{"type": "string", "default": nil},
			"broken":  "not an object",
		},
	}
	for _, tt := range []struct {
		name    string
		schema  any
		content map[string]any
		want    map[string]any
	}{
		{"omitted fields get defaults", mapSchema, map[string]any{"name": "x"},
			map[string]any{"name": "x", "color": "blue", "count": 3.0, "notify": false}},
		{"given values are kept", mapSchema, map[string]any{"color": "red", "count": 9, "notify": true},
			map[string]any{"color": "red", "count": 9, "notify": true}},
		{"nil content", mapSchema, nil, map[string]any{"color": "blue", "count": 3.0, "notify": false}},
		{"raw JSON schema", json.RawMessage(`{"type":"object","properties":{"color":{"type":"string","default":"green"}}}`),
			map[string]any{}, map[string]any{"color": "green"}},
		{"bytes schema", []byte(`{"properties":{"n":{"type":"number","default":1.5}}}`), nil, map[string]any{"n": 1.5}},
		{"struct schema", schemaStruct{Type: "object", Properties: map[string]map[string]any{"lang": {"type": "string", "default": "go"}}},
			map[string]any{"a": 1}, map[string]any{"a": 1, "lang": "go"}},
		{"no defaults leaves content alone", map[string]any{"properties": map[string]any{"a": map[string]any{"type": "string"}}},
			map[string]any{"a": "b"}, map[string]any{"a": "b"}},
		{"nil schema", nil, map[string]any{"a": "b"}, map[string]any{"a": "b"}},
		{"unreadable schema", make(chan int), map[string]any{"a": "b"}, map[string]any{"a": "b"}},
		{"invalid raw JSON", json.RawMessage(`{`), nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := fmt.Sprint(tt.content)
			got := FillDefaults(tt.schema, tt.content)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("FillDefaults (-want +got):\n%s", diff)
			}
			if after := fmt.Sprint(tt.content); after != before {
				t.Errorf("content was modified: %s → %s", before, after)
			}
		})
	}
}

func TestElicitPolicy(t *testing.T) {
	form := &mcp.ElicitParams{
		Message: "Pick a color",
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
			"color": map[string]any{"type": "string", "default": "blue"},
			"size":  map[string]any{"type": "integer"},
		}},
	}
	url := &mcp.ElicitParams{Mode: "url", Message: "Log in", URL: "https://example.invalid/login", ElicitationID: "e1"}
	accept := func(content map[string]any) func(context.Context, Elicitation) (*mcp.ElicitResult, error) {
		return func(context.Context, Elicitation) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: content}, nil
		}
	}
	for _, tt := range []struct {
		name      string
		approval  config.Approval
		params    *mcp.ElicitParams
		elicit    func(context.Context, Elicitation) (*mcp.ElicitResult, error) // nil = no asker
		want      *mcp.ElicitResult
		wantErr   bool
		wantAsked bool
	}{
		{name: "policy never declines", approval: never, params: form, elicit: accept(nil),
			want: &mcp.ElicitResult{Action: "decline"}},
		{name: "policy never with full access still declines", approval: neverFull, params: form, elicit: accept(nil),
			want: &mcp.ElicitResult{Action: "decline"}},
		{name: "nobody configured declines", approval: onRequest, params: form,
			want: &mcp.ElicitResult{Action: "decline"}},
		{name: "nobody reachable declines", approval: onRequest, params: form, wantAsked: true,
			elicit: func(context.Context, Elicitation) (*mcp.ElicitResult, error) {
				return nil, fmt.Errorf("%w: stdin is not a terminal", ErrNobodyToAsk)
			},
			want: &mcp.ElicitResult{Action: "decline"}},
		{name: "missing params decline", approval: onRequest, params: nil, elicit: accept(nil),
			want: &mcp.ElicitResult{Action: "decline"}},
		{name: "accepted form gets defaults", approval: untrusted, params: form, wantAsked: true,
			elicit: accept(map[string]any{"size": 2}),
			want:   &mcp.ElicitResult{Action: "accept", Content: map[string]any{"size": 2, "color": "blue"}}},
		{name: "declined form is passed through", approval: onRequest, params: form, wantAsked: true,
			elicit: func(context.Context, Elicitation) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "decline"}, nil
			},
			want: &mcp.ElicitResult{Action: "decline"}},
		{name: "accepted url is passed through", approval: onRequest, params: url, wantAsked: true,
			elicit: accept(nil), want: &mcp.ElicitResult{Action: "accept"}},
		{name: "no result is a cancel", approval: onRequest, params: form, wantAsked: true,
			elicit: func(context.Context, Elicitation) (*mcp.ElicitResult, error) { return nil, nil },
			want:   &mcp.ElicitResult{Action: "cancel"}},
		{name: "asker error is returned", approval: onRequest, params: form, wantAsked: true, wantErr: true,
			elicit: func(context.Context, Elicitation) (*mcp.ElicitResult, error) { return nil, errors.New("broken pipe") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			asked := false
			rec := &events.Recorder{}
			opts := Options{Approval: tt.approval, Events: rec}
			if tt.elicit != nil {
				opts.Asker = &fakeAsker{ElicitF: func(ctx context.Context, e Elicitation) (*mcp.ElicitResult, error) {
					asked = true
					if e.Server != "files" || e.Params != tt.params {
						t.Errorf("asker got %+v, want server files and the original params", e)
					}
					return tt.elicit(ctx, e)
				}}
			}
			got, err := New(opts).Elicit(t.Context(), nil, "files", tt.params)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Elicit error = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Elicit (-want +got):\n%s", diff)
			}
			if asked != tt.wantAsked {
				t.Errorf("asked = %v, want %v", asked, tt.wantAsked)
			}
			if n := len(rec.Events()); n != 0 {
				t.Errorf("Elicit emitted %d events, want none", n)
			}
		})
	}
}

func TestElicitCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	p := New(Options{Approval: onRequest, Asker: &fakeAsker{ElicitF: func(ctx context.Context, _ Elicitation) (*mcp.ElicitResult, error) {
		return nil, ctx.Err()
	}}})
	_, err := p.Elicit(ctx, nil, "files", &mcp.ElicitParams{Message: "hi"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Elicit error = %v, want context.Canceled", err)
	}
}
