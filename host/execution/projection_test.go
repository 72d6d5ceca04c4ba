package execution_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/execution"
)

const header = "Wall time: 1.5000 seconds\nOutput:"

var (
	png      = []byte("\x89PNG\r\n\x1a\nfake")
	wav      = []byte("RIFF....WAVEfmt ")
	pngURL   = "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
	wavURL   = "data:audio/wav;base64," + base64.StdEncoding.EncodeToString(wav)
	textOnly = execution.Model{}
	seeing   = execution.Model{ImageInput: true}
	hearing  = execution.Model{AudioInput: true}
	both     = execution.Model{ImageInput: true, AudioInput: true}
)

func imageResult() *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.ImageContent{Data: png, MIMEType: "image/png"},
		&mcp.TextContent{Text: "a chart"},
	}}
}

func TestModelProjection(t *testing.T) {
	pngB64 := base64.StdEncoding.EncodeToString(png)
	tests := []struct {
		name  string
		res   *mcp.CallToolResult
		err   error
		model execution.Model
		want  execution.ModelOutput
	}{
		{
			name: "plain text",
			res:  &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}},
			want: execution.ModelOutput{Text: header + "\n" + `[{"type":"text","text":"hi"}]`},
		},
		{
			name: "image replaced for a text-only model",
			res:  imageResult(),
			want: execution.ModelOutput{Text: header + "\n" +
				`[{"type":"text","text":"<image content omitted because you do not support image input>"},{"type":"text","text":"a chart"}]`},
		},
		{
			name: "image replaced for a model that only hears",
			res:  imageResult(),
			// Audio support does not make images acceptable.
			model: hearing,
			want: execution.ModelOutput{Text: header + "\n" +
				`[{"type":"text","text":"<image content omitted because you do not support image input>"},{"type":"text","text":"a chart"}]`},
		},
		{
			name:  "image kept as items for a model that sees",
			res:   imageResult(),
			model: seeing,
			want: execution.ModelOutput{
				Text: header + "\n" + `[{"type":"image","mimeType":"image/png","data":"` + pngB64 + `"},{"type":"text","text":"a chart"}]`,
				Items: []execution.Item{
					{Type: "input_text", Text: header},
					{Type: "input_image", URL: pngURL},
					{Type: "input_text", Text: "a chart"},
				},
			},
		},
		{
			name: "audio replaced for a text-only model",
			res:  &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: wav, MIMEType: "audio/wav"}}},
			want: execution.ModelOutput{Text: header + "\n" +
				`[{"type":"text","text":"<audio content omitted because you do not support audio input>"}]`},
		},
		{
			name:  "audio kept as items for a model that hears",
			res:   &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: wav, MIMEType: "audio/wav"}}},
			model: hearing,
			want: execution.ModelOutput{
				Text:  header + "\n" + `[{"type":"audio","mimeType":"audio/wav","data":"` + base64.StdEncoding.EncodeToString(wav) + `"}]`,
				Items: []execution.Item{{Type: "input_text", Text: header}, {Type: "input_audio", URL: wavURL}},
			},
		},
		{
			name: "mixed media, only images accepted",
			res: &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "both"},
				&mcp.ImageContent{Data: png, MIMEType: "image/png"},
				&mcp.AudioContent{Data: wav, MIMEType: "audio/wav"},
				&mcp.ResourceLink{URI: "file:///r.txt", Name: "r"},
			}},
			model: seeing,
			want: execution.ModelOutput{
				Text: header + "\n" + `[{"type":"text","text":"both"},{"type":"image","mimeType":"image/png","data":"` + pngB64 + `"},` +
					`{"type":"text","text":"<audio content omitted because you do not support audio input>"},{"type":"resource_link","uri":"file:///r.txt","name":"r"}]`,
				Items: []execution.Item{
					{Type: "input_text", Text: header},
					{Type: "input_text", Text: "both"},
					{Type: "input_image", URL: pngURL},
					{Type: "input_text", Text: execution.AudioOmitted},
					{Type: "input_text", Text: `{"type":"resource_link","uri":"file:///r.txt","name":"r"}`},
				},
			},
		},
		{
			name:  "image without a mime type",
			res:   &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: png}}},
			model: both,
			want: execution.ModelOutput{
				Text: header + "\n" + `[{"type":"image","mimeType":"","data":"` + pngB64 + `"}]`,
				Items: []execution.Item{
					{Type: "input_text", Text: header},
					{Type: "input_image", URL: "data:application/octet-stream;base64," + pngB64},
				},
			},
		},
		{
			name: "structured content preferred over blocks and media",
			res: &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: "Paris: sunny"}, &mcp.ImageContent{Data: png, MIMEType: "image/png"}},
				StructuredContent: map[string]any{"temp": 21.5, "city": "Paris", "note": "a<b & c>d"},
			},
			model: both,
			want:  execution.ModelOutput{Text: header + "\n" + `{"city":"Paris","note":"a<b & c>d","temp":21.5}`},
		},
		{
			name: "structured content that is an array",
			res:  &mcp.CallToolResult{StructuredContent: []any{1, "two"}},
			want: execution.ModelOutput{Text: header + "\n" + `[1,"two"]`},
		},
		{
			name: "structured content null falls back to blocks",
			res: &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: "plain"}},
				StructuredContent: json.RawMessage("null"),
			},
			want: execution.ModelOutput{Text: header + "\n" + `[{"type":"text","text":"plain"}]`},
		},
		{
			name: "no content at all",
			res:  &mcp.CallToolResult{},
			want: execution.ModelOutput{Text: header + "\n[]"},
		},
		{
			name: "isError result is shown like any result",
			res:  &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: `no such file "x"`}}},
			want: execution.ModelOutput{Text: header + "\n" + `[{"type":"text","text":"no such file \"x\""}]`},
		},
		{
			name: "text keeps an escaped-looking sequence literally",
			res:  &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `\u003c is < and a` + "\u2028" + `b`}}},
			want: execution.ModelOutput{Text: header + "\n" + `[{"type":"text","text":"\\u003c is < and a` + "\u2028" + `b"}]`},
		},
		{
			name: "transport error",
			err:  errors.New("tool call failed for `demo/slow`: timed out awaiting tools/call after 0.2s"),
			want: execution.ModelOutput{Text: header + "\ntool call error: tool call failed for `demo/slow`: timed out awaiting tools/call after 0.2s"},
		},
		{
			name: "neither result nor error: just the header",
			want: execution.ModelOutput{Text: header},
		},
		{
			name: "empty error text: just the header",
			err:  errors.New(""),
			want: execution.ModelOutput{Text: header + "\ntool call error: "},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := execution.ModelProjection(tt.res, tt.err, 1500*time.Millisecond, tt.model)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ModelProjection (-want +got):\n%s", diff)
			}
		})
	}
}

func TestModelProjectionDoesNotModifyTheResult(t *testing.T) {
	res := imageResult()
	_ = execution.ModelProjection(res, nil, time.Second, textOnly)
	if _, ok := res.Content[0].(*mcp.ImageContent); !ok {
		t.Fatalf("the raw result's image was replaced in place: %#v", res.Content[0])
	}
}

func TestModelProjectionWallTimeFormat(t *testing.T) {
	tests := []struct {
		wall time.Duration
		want string
	}{
		{0, "Wall time: 0.0000 seconds\nOutput:"},
		{50 * time.Microsecond, "Wall time: 0.0001 seconds\nOutput:"},
		{1234567891 * time.Nanosecond, "Wall time: 1.2346 seconds\nOutput:"},
		{12*time.Second + 500*time.Millisecond, "Wall time: 12.5000 seconds\nOutput:"},
		{3 * time.Hour, "Wall time: 10800.0000 seconds\nOutput:"},
	}
	for _, tt := range tests {
		t.Run(tt.wall.String(), func(t *testing.T) {
			got := execution.ModelProjection(nil, nil, tt.wall, textOnly).Text
			if got != tt.want {
				t.Errorf("header = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestModelProjectionBudget(t *testing.T) {
	long := strings.Repeat("0123456789", 3000) // 30000 bytes
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: long}}}

	t.Run("default budget is 12000 bytes", func(t *testing.T) {
		got := execution.ModelProjection(res, nil, time.Second, execution.Model{}).Text
		if len(got) > execution.DefaultOutputBudget || len(got) < execution.DefaultOutputBudget-4 {
			t.Fatalf("len = %d, want about %d", len(got), execution.DefaultOutputBudget)
		}
		if !strings.HasPrefix(got, "Wall time: 1.0000 seconds\nOutput:\n[{\"type\":\"text\",\"text\":\"0123") {
			t.Errorf("start lost: %.80q", got)
		}
		if !strings.HasSuffix(got, "6789\"}]") {
			t.Errorf("end lost: %q", got[len(got)-40:])
		}
		if !markerRE.MatchString(got) {
			t.Error("no truncation marker")
		}
	})
	t.Run("configured budget", func(t *testing.T) {
		got := execution.ModelProjection(res, nil, time.Second, execution.Model{OutputBudgetBytes: 500}).Text
		if len(got) > 500 || !markerRE.MatchString(got) {
			t.Fatalf("len %d, marker %v", len(got), markerRE.MatchString(got))
		}
	})
	t.Run("output exactly at the budget is untouched", func(t *testing.T) {
		full := execution.ModelProjection(res, nil, time.Second, execution.Model{OutputBudgetBytes: 1 << 20}).Text
		got := execution.ModelProjection(res, nil, time.Second, execution.Model{OutputBudgetBytes: len(full)}).Text
		if got != full {
			t.Fatal("an output that fits its budget was truncated")
		}
	})
	t.Run("errors are truncated too", func(t *testing.T) {
		got := execution.ModelProjection(nil, errors.New(long), time.Second, execution.Model{OutputBudgetBytes: 300}).Text
		if len(got) > 300 || !strings.HasPrefix(got, "Wall time: 1.0000 seconds\nOutput:\ntool call error: 0123") {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("multibyte text never split", func(t *testing.T) {
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("日本語", 2000)}}}
		for budget := 100; budget < 130; budget++ {
			got := execution.ModelProjection(res, nil, time.Second, execution.Model{OutputBudgetBytes: budget}).Text
			if len(got) > budget || !utf8.ValidString(got) {
				t.Fatalf("budget %d: len %d valid %v", budget, len(got), utf8.ValidString(got))
			}
		}
	})
}

func TestModelProjectionItemBudget(t *testing.T) {
	res := &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: strings.Repeat("a", 100)},
		&mcp.ImageContent{Data: png, MIMEType: "image/png"},
		&mcp.TextContent{Text: strings.Repeat("b", 500)},
		&mcp.ImageContent{Data: png, MIMEType: "image/png"},
		&mcp.TextContent{Text: "dropped"},
		&mcp.TextContent{Text: "dropped too"},
	}}
	// header (33 bytes) + 100 leaves 167 bytes for the 500-byte item.
	got := execution.ModelProjection(res, nil, time.Second, execution.Model{ImageInput: true, OutputBudgetBytes: 300})
	var types []string
	textBytes := 0
	for _, it := range got.Items {
		types = append(types, it.Type)
		if it.Type == "input_text" {
			textBytes += len(it.Text)
		}
	}
	wantTypes := []string{"input_text", "input_text", "input_image", "input_text", "input_image", "input_text"}
	if diff := cmp.Diff(wantTypes, types); diff != "" {
		t.Fatalf("item types (-want +got):\n%s", diff)
	}
	if got.Items[1].Text != strings.Repeat("a", 100) {
		t.Errorf("an item within budget was changed: %q", got.Items[1].Text)
	}
	if third := got.Items[3].Text; !markerRE.MatchString(third) || !strings.HasPrefix(third, "bbb") {
		t.Errorf("the item crossing the budget = %q, want it middle-truncated", third)
	}
	if note := got.Items[5].Text; note != "…2 text items omitted…" {
		t.Errorf("closing note = %q", note)
	}
	if textBytes-len(got.Items[5].Text) > 300 {
		t.Errorf("text items hold %d bytes, over the 300-byte budget", textBytes)
	}
	if got.Items[2].URL != pngURL || got.Items[4].URL != pngURL {
		t.Error("images must be kept whole")
	}
	if len(got.Text) > 300 {
		t.Errorf("Text is %d bytes, over budget", len(got.Text))
	}
}

func TestEventProjection(t *testing.T) {
	t.Run("small result passes through", func(t *testing.T) {
		res := &mcp.CallToolResult{
			Meta:              mcp.Meta{"trace": "t-1"},
			Content:           []mcp.Content{&mcp.TextContent{Text: "a<b"}, &mcp.ImageContent{Data: png, MIMEType: "image/png"}},
			StructuredContent: map[string]any{"n": 1.0},
			IsError:           true,
		}
		got := execution.EventProjection(res, nil)
		want, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(decode(t, want), decode(t, got)); diff != "" {
			t.Errorf("event result differs from the raw result (-raw +event):\n%s", diff)
		}
		if !strings.Contains(string(got), `"a<b"`) {
			t.Errorf("event JSON %s escapes HTML characters", got)
		}
	})
	t.Run("no content serializes as an empty array", func(t *testing.T) {
		got := string(execution.EventProjection(&mcp.CallToolResult{}, nil))
		if got != `{"content":[]}` {
			t.Errorf("got %s", got)
		}
	})
	for _, isError := range []bool{false, true} {
		t.Run("over 1 MiB is capped, isError="+map[bool]string{false: "false", true: "true"}[isError], func(t *testing.T) {
			res := &mcp.CallToolResult{
				Meta:              mcp.Meta{"k": "v"},
				Content:           []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", 2<<20)}},
				StructuredContent: map[string]any{"big": true},
				IsError:           isError,
			}
			got := execution.EventProjection(res, nil)
			var capped struct {
				Content []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
				StructuredContent json.RawMessage `json:"structuredContent"`
				Meta              json.RawMessage `json:"_meta"`
				IsError           *bool           `json:"isError"`
			}
			if err := json.Unmarshal(got, &capped); err != nil {
				t.Fatalf("capped event is not JSON: %v", err)
			}
			if len(capped.Content) != 1 || capped.Content[0].Type != "text" {
				t.Fatalf("content = %+v", capped.Content)
			}
			text := capped.Content[0].Text
			if len(text) > execution.EventResultMaxBytes || len(text) < execution.EventResultMaxBytes-64 {
				t.Errorf("capped text is %d bytes, want just under %d", len(text), execution.EventResultMaxBytes)
			}
			if !strings.HasPrefix(text, `{"_meta":{"k":"v"},"content":[{"type":"text","text":"xxx`) || !markerRE.MatchString(text) {
				t.Errorf("capped text should be the middle-truncated serialized result: %.100q", text)
			}
			if string(capped.StructuredContent) != "null" || string(capped.Meta) != "null" {
				t.Errorf("structuredContent = %s, _meta = %s, want null", capped.StructuredContent, capped.Meta)
			}
			if capped.IsError == nil || *capped.IsError != isError {
				t.Errorf("isError = %v, want %v", capped.IsError, isError)
			}
		})
	}
	t.Run("error", func(t *testing.T) {
		got := string(execution.EventProjection(nil, errors.New(`calling "slow": <gone>`)))
		if want := `{"error":"calling \"slow\": <gone>"}`; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	})
	t.Run("huge error is truncated", func(t *testing.T) {
		got := execution.EventProjection(nil, errors.New(strings.Repeat("e", 3<<20)))
		var v struct{ Error string }
		if err := json.Unmarshal(got, &v); err != nil {
			t.Fatal(err)
		}
		if len(v.Error) > execution.EventResultMaxBytes || !markerRE.MatchString(v.Error) {
			t.Errorf("error text is %d bytes", len(v.Error))
		}
	})
	t.Run("nothing", func(t *testing.T) {
		if got := execution.EventProjection(nil, nil); got != nil {
			t.Errorf("got %s, want nil", got)
		}
	})
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

func BenchmarkModelProjection(b *testing.B) {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("lorem ipsum <dolor> sit amet\n", 100<<10/29)}}}
	// The baseline is the unavoidable part: serializing the blocks once.
	b.Run("baseline_marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(res.Content); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("projection_100KiB", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = execution.ModelProjection(res, nil, time.Second, textOnly)
		}
	})
	b.Run("event_100KiB", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = execution.EventProjection(res, nil)
		}
	})
}
