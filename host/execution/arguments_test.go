package execution_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/host/execution"
)

func TestParseArguments(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		want    string // the JSON sent; "" = no arguments
		wantErr string // exact text; "" = no error
	}{
		{name: "empty", raw: ""},
		{name: "whitespace only", raw: " \t\r\n "},
		{name: "empty object", raw: "{}", want: "{}"},
		{name: "object with surrounding space", raw: "  {\"text\": \"hi\"}\n", want: `{"text": "hi"}`},
		{
			name: "nested values, as written",
			raw:  `{"a":[1,"x",true,null],"b":{"c":2.5}}`,
			want: `{"a":[1,"x",true,null],"b":{"c":2.5}}`,
		},
		{
			name:    "missing value",
			raw:     `{"a":}`,
			wantErr: "err: invalid JSON in tool arguments at byte offset 5: invalid character '}' looking for beginning of value; send the arguments as one JSON object",
		},
		{
			name:    "truncated object",
			raw:     `{"a":1`,
			wantErr: "err: invalid JSON in tool arguments at byte offset 6: unexpected end of JSON input; send the arguments as one JSON object",
		},
		{
			name:    "truncated literal",
			raw:     `{"a":tru`,
			wantErr: "err: invalid JSON in tool arguments at byte offset 8: unexpected end of JSON input; send the arguments as one JSON object",
		},
		{
			name:    "trailing garbage",
			raw:     `{"a":1} x`,
			wantErr: "err: invalid JSON in tool arguments at byte offset 8: invalid character 'x' after top-level value; send the arguments as one JSON object",
		},
		{
			name:    "two objects",
			raw:     `{}{}`,
			wantErr: "err: invalid JSON in tool arguments at byte offset 2: invalid character '{' after top-level value; send the arguments as one JSON object",
		},
		{name: "array", raw: `[1,2]`, wantErr: "MCP tool arguments must be a JSON object, got array"},
		{name: "string", raw: `"hi"`, wantErr: "MCP tool arguments must be a JSON object, got string"},
		{name: "number", raw: `42`, wantErr: "MCP tool arguments must be a JSON object, got number"},
		{name: "boolean", raw: `false`, wantErr: "MCP tool arguments must be a JSON object, got boolean"},
		{name: "null", raw: ` null `, wantErr: "MCP tool arguments must be a JSON object, got null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := execution.ParseArguments([]byte(tt.raw))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ParseArguments(%q) error = %v\nwant %s", tt.raw, err, tt.wantErr)
				}
				var ae *execution.ArgumentsError
				if !errors.As(err, &ae) {
					t.Errorf("error %T is not an *ArgumentsError", err)
				}
				if got != nil {
					t.Errorf("ParseArguments(%q) = %v with an error, want nil", tt.raw, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseArguments(%q): %v", tt.raw, err)
			}
			if tt.want == "" && got != nil {
				t.Fatalf("ParseArguments(%q) = %#v, want nil (no arguments)", tt.raw, got)
			}
			if string(got) != tt.want {
				t.Errorf("ParseArguments(%q) = %s, want %s", tt.raw, got, tt.want)
			}
		})
	}
}

func TestParseArgumentsKeepsNumbersExactly(t *testing.T) {
	raw := `{"id":123456789012345678901234567890,"price":0.1000000000000000055511151231257827,"exp":1e400,"n":[-0,9007199254740993]}`
	got, err := execution.ParseArguments([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	// What goes on the wire must be what the model wrote: re-encoding
	// reproduces every literal.
	out, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	for _, lit := range []string{"123456789012345678901234567890", "0.1000000000000000055511151231257827", "1e400", "-0", "9007199254740993"} {
		if !strings.Contains(string(out), lit) {
			t.Errorf("re-encoded arguments %s lost the number %s", out, lit)
		}
	}
}
