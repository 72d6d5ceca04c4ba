package terminal

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/approval"
)

// fullForm has one field of every kind, in an order that is not
// alphabetical (the prompt must follow the server's order).
const fullForm = `{
  "type": "object",
  "properties": {
    "name":      {"type": "string", "title": "Your name", "minLength": 2},
    "email":     {"type": "string", "format": "email", "description": "Where we reach you."},
    "age":       {"type": "integer", "minimum": 0, "maximum": 150},
    "ratio":     {"type": "number"},
    "subscribe": {"type": "boolean", "default": true},
    "color":     {"type": "string", "enum": ["r", "g", "b"], "enumNames": ["Red", "Green", "Blue"]},
    "size":      {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
    "tags":      {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}},
    "retries":   {"type": "integer", "default": 3},
    "token":     {"type": "string", "format": "password", "default": "hunter2"},
    "pin":       {"type": "string", "writeOnly": true},
    "nickname":  {"type": "string"}
  },
  "required": ["name", "email", "age", "pin"]
}`

func formParams() *mcp.ElicitParams {
	return &mcp.ElicitParams{Message: "Tell us about you.\nIt takes a minute.", RequestedSchema: json.RawMessage(fullForm)}
}

func TestElicitForm(t *testing.T) {
	r := newRig(t, Options{Interactive: true})
	got := async(func() (*mcp.ElicitResult, error) {
		return r.term.Elicit(t.Context(), approval.Elicitation{Server: "files", Params: formParams()})
	})

	intro := r.screen.waitFor(t, "Your name [name] (text, at least 2 characters; required)\n> ")
	for _, w := range []string{"toolgate: the files MCP server asks for input", "  Tell us about you.\n  It takes a minute.\n", ":decline", ":cancel"} {
		if !strings.Contains(intro, w) {
			t.Errorf("intro lacks %q:\n%s", w, intro)
		}
	}
	steps := []struct{ answer, then string }{
		{"", "This field is required.\n> "},
		{"A", "that is too short: at least 2 characters; try again.\n> "},
		{"Ada", "email (email address; required)\n  Where we reach you.\n> "},
		{"not-an-email", "that is not an email address (like name@example.com); try again.\n> "},
		{"ada@example.com", "age (whole number from 0 to 150; required)\n> "},
		{"abc", "that is not a whole number; try again.\n> "},
		{"200", "that is above the maximum of 150; try again.\n> "},
		{"36", "ratio (number; optional)\n> "},
		{"x", "that is not a number; try again.\n> "},
		{"0.5", "subscribe (y/n; optional)\n  default: yes\n> "},
		{"maybe", "please answer y or n; try again.\n> "},
		{"", "color (choose one: a number or a value; optional)\n  1) Red (r)\n  2) Green (g)\n  3) Blue (b)\n> "},
		{"7", `"7" is not one of the choices; type its number; try again.` + "\n> "},
		{"2", "size (choose one: a number or a value; optional)\n  1) Small (s)\n  2) Large (l)\n> "},
		{"large", "tags (choose any: numbers or values, separated by commas; optional)\n  1) a\n  2) b\n  3) c\n> "},
		{"1, c", "retries (whole number; optional)\n  default: 3\n> "},
		{"", "token (secret text, not shown again; optional)\n  default: ********\n> "},
		{"", "pin (text; required)\n> "},
		{"4321", "nickname (text; optional)\n> "},
		{"", "Send this to the files MCP server? [a]ccept / [d]ecline / [c]ancel\n> "},
	}
	for _, s := range steps {
		r.answer(t, s.answer)
		r.screen.waitFor(t, s.then)
	}
	r.answer(t, "a")
	res, err := await(t, got)
	if err != nil {
		t.Fatal(err)
	}
	want := &mcp.ElicitResult{Action: "accept", Content: map[string]any{
		"name":      "Ada",
		"email":     "ada@example.com",
		"age":       int64(36),
		"ratio":     0.5,
		"subscribe": true,
		"color":     "g",
		"size":      "l",
		"tags":      []any{"a", "c"},
		"retries":   int64(3),
		"token":     "hunter2",
		"pin":       "4321",
	}}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("Elicit (-want +got):\n%s", diff)
	}

	out := r.screen.all()
	summary := out[strings.Index(out, "Your answers:"):]
	for _, w := range []string{
		"  Your name [name]: Ada\n", "  color: Green (g)\n", "  tags: a, c\n", "  token: ********\n", "  pin: ********\n",
		"  nickname: (skipped)\n", "  subscribe: yes\n",
	} {
		if !strings.Contains(summary, w) {
			t.Errorf("summary lacks %q:\n%s", w, summary)
		}
	}
	for _, secret := range []string{"hunter2", "4321"} {
		if strings.Contains(out, secret) {
			t.Errorf("output shows the secret %q", secret)
		}
	}
}

func TestElicitFormStops(t *testing.T) {
	for _, tt := range []struct {
		name    string
		answers []string
		want    string
	}{
		{"stop word cancel", []string{":cancel"}, "cancel"},
		{"stop word decline", []string{"Ada", ":decline"}, "decline"},
		{"final decline", []string{"Ada", "a@b.example", "1", "", "", "", "", "", "", "", "x", "", "d"}, "decline"},
		{"final cancel", []string{"Ada", "a@b.example", "1", "", "", "", "", "", "", "", "x", "", "c"}, "cancel"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, Options{Interactive: true})
			got := async(func() (*mcp.ElicitResult, error) {
				return r.term.Elicit(t.Context(), approval.Elicitation{Server: "files", Params: formParams()})
			})
			for _, a := range tt.answers {
				r.screen.waitFor(t, "> ")
				r.answer(t, a)
			}
			res, err := await(t, got)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&mcp.ElicitResult{Action: tt.want}, res); diff != "" {
				t.Errorf("Elicit (-want +got):\n%s", diff)
			}
		})
	}
}

func TestElicitConfirmation(t *testing.T) {
	// A form without fields is a yes/no question from the server.
	r := newRig(t, Options{Interactive: true})
	params := &mcp.ElicitParams{Message: "Delete 3 files?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}}}
	got := async(func() (*mcp.ElicitResult, error) {
		return r.term.Elicit(t.Context(), approval.Elicitation{Server: "files", Params: params})
	})
	text := r.screen.waitFor(t, "> ")
	want := "\ntoolgate: the files MCP server asks for input\n  Delete 3 files?\nSend this to the files MCP server? [a]ccept / [d]ecline / [c]ancel\n> "
	if text != want {
		t.Errorf("prompt:\n%q\nwant:\n%q", text, want)
	}
	r.answer(t, "a")
	res, err := await(t, got)
	if err != nil || res.Action != "accept" || len(res.Content) != 0 {
		t.Errorf("Elicit = %+v, %v; want accept with no content", res, err)
	}
}

func TestElicitMapSchemaOrder(t *testing.T) {
	fields, err := parseForm(map[string]any{"properties": map[string]any{
		"b": map[string]any{"type": "string"},
		"a": map[string]any{"type": "number", "default": 2},
	}, "required": []string{"b"}})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{fields[0].name, fields[1].name}
	if diff := cmp.Diff([]string{"a", "b"}, got); diff != "" {
		t.Errorf("field order (-want +got):\n%s", diff)
	}
	if !fields[1].required || fields[0].required || !fields[0].hasDefault {
		t.Errorf("fields = %+v", fields)
	}
}

func TestElicitUnreadableForm(t *testing.T) {
	r := newRig(t, Options{Interactive: true})
	params := &mcp.ElicitParams{Message: "hi", RequestedSchema: json.RawMessage(`{"properties": [1, 2]}`)}
	res, err := r.term.Elicit(t.Context(), approval.Elicitation{Server: "files", Params: params})
	if err != nil || res.Action != "decline" {
		t.Errorf("Elicit = %+v, %v; want decline", res, err)
	}
	if out := r.screen.all(); !strings.Contains(out, "sent a form toolgate cannot show") {
		t.Errorf("output does not explain the decline:\n%s", out)
	}
}

func TestElicitURL(t *testing.T) {
	for _, tt := range []struct {
		answer, want string
		url          string
		warn         bool
	}{
		{"a", "accept", "https://auth.example.com/device?code=XYZ", false},
		{"d", "decline", "https://auth.example.com/device?code=XYZ", false},
		{"c", "cancel", "http://auth.example.com/login", true},
	} {
		t.Run(tt.answer, func(t *testing.T) {
			r := newRig(t, Options{Interactive: true})
			params := &mcp.ElicitParams{Mode: "url", Message: "Sign in to continue.", URL: tt.url, ElicitationID: "e-1"}
			got := async(func() (*mcp.ElicitResult, error) {
				return r.term.Elicit(t.Context(), approval.Elicitation{Server: "github", Params: params})
			})
			text := r.screen.waitFor(t, "\n> ")
			for _, w := range []string{
				"toolgate: the github MCP server asks you to open a URL", "  Sign in to continue.", "  URL:  " + tt.url,
				"  host: auth.example.com", "toolgate does not open it for you", "[a] I have finished (accept)  [d] decline  [c] cancel",
			} {
				if !strings.Contains(text, w) {
					t.Errorf("prompt lacks %q:\n%s", w, text)
				}
			}
			if got := strings.Contains(text, "not https"); got != tt.warn {
				t.Errorf("https warning shown = %v, want %v", got, tt.warn)
			}
			r.answer(t, "whatever")
			r.screen.waitFor(t, "Please answer a, d or c.\n> ")
			r.answer(t, tt.answer)
			res, err := await(t, got)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&mcp.ElicitResult{Action: tt.want}, res); diff != "" {
				t.Errorf("Elicit (-want +got):\n%s", diff)
			}
		})
	}
}

func TestElicitEOFAndCancel(t *testing.T) {
	t.Run("EOF cancels", func(t *testing.T) {
		r := newRig(t, Options{Interactive: true})
		got := async(func() (*mcp.ElicitResult, error) {
			return r.term.Elicit(t.Context(), approval.Elicitation{Server: "files", Params: formParams()})
		})
		r.screen.waitFor(t, "> ")
		_ = r.input.Close()
		res, err := await(t, got)
		if err != nil || res.Action != "cancel" {
			t.Errorf("Elicit = %+v, %v; want cancel", res, err)
		}
	})
	t.Run("ctx cancelled", func(t *testing.T) {
		r := newRig(t, Options{Interactive: true})
		ctx, cancel := context.WithCancel(t.Context())
		got := async(func() (*mcp.ElicitResult, error) {
			return r.term.Elicit(ctx, approval.Elicitation{Server: "files", Params: formParams()})
		})
		r.screen.waitFor(t, "> ")
		cancel()
		if _, err := await(t, got); !errors.Is(err, context.Canceled) {
			t.Errorf("Elicit error = %v, want context.Canceled", err)
		}
	})
}
