package mcpclient

import (
	"bytes"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestDecodeOwnedResponseAgreesWithGoSDK: whatever the fast path decodes,
// go-sdk decodes to the same response; what it leaves alone is every
// message that is not a plain successful response.
func TestDecodeOwnedResponseAgreesWithGoSDK(t *testing.T) {
	deep := strings.Repeat("[", maxMessageDepth) + strings.Repeat("]", maxMessageDepth)
	tests := []struct {
		name string
		line string
		fast bool // the fast path decodes it
	}{
		{"number id", `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"}]}}`, true},
		{"string id", `{"jsonrpc":"2.0","id":"a-1","result":{}}`, true},
		{"spaces everywhere", " {\n \"result\" : [1, {\"a\":\"}]\\\"\"}] ,\t\"id\" : 3 , \"jsonrpc\" : \"2.0\" } ", true},
		{"unknown keys of every kind", `{"x":{"y":[1,"]}",null]},"n":-1.5e3,"b":true,"jsonrpc":"2.0","id":1,"result":"r"}`, true},
		{"escaped key", `{"jsonrpc":"2.0","id":1,"res\u0075lt":{"k":1}}`, true},
		{"nesting at go-sdk's limit", `{"jsonrpc":"2.0","id":1,"result":` + deep[1:len(deep)-1] + `}`, true},
		{"nesting past go-sdk's limit", `{"jsonrpc":"2.0","id":1,"result":` + deep + `}`, false},
		{"a request", `{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`, false},
		{"an error response", `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"no"}}`, false},
		{"null id", `{"jsonrpc":"2.0","id":null,"result":{}}`, false},
		{"no id", `{"jsonrpc":"2.0","result":{}}`, false},
		{"bool id", `{"jsonrpc":"2.0","id":true,"result":{}}`, false},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"result":{}}`, false},
		{"no version", `{"id":1,"result":{}}`, false},
		{"keys match case-sensitively", `{"jsonrpc":"2.0","id":1,"Result":{}}`, false},
		{"duplicate result", `{"jsonrpc":"2.0","id":1,"result":1,"result":2}`, false},
		{"not an object", `[{"jsonrpc":"2.0","id":1,"result":{}}]`, false},
		{"not JSON", `{"jsonrpc":"2.0","id":1,"result":{}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decodeOwnedResponse([]byte(tt.line))
			if (got != nil) != tt.fast {
				t.Fatalf("fast path decoded it: %v, want %v", got != nil, tt.fast)
			}
			if got == nil {
				return
			}
			msg, err := jsonrpc.DecodeMessage([]byte(tt.line))
			if err != nil {
				t.Fatalf("go-sdk refuses what the fast path decoded: %v", err)
			}
			want, ok := msg.(*jsonrpc.Response)
			if !ok || want.Error != nil {
				t.Fatalf("go-sdk decodes %#v, the fast path a result", msg)
			}
			if got.ID != want.ID || !bytes.Equal(got.Result, want.Result) {
				t.Errorf("fast path: id %v result %s; go-sdk: id %v result %s", got.ID, got.Result, want.ID, want.Result)
			}
		})
	}
}
