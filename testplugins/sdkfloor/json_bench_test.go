package sdkfloor_test

import (
	"bytes"
	"encoding/json"
	"testing"

	segjson "github.com/segmentio/encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The go-sdk patch of docs/upstream/go-sdk-internal-json.md, reproduced
// against the unmodified go-sdk of go.mod: go-sdk's internal/json.Unmarshal
// builds a segmentio json.Decoder over a bytes.Reader for every value, and
// that decoder reads through a fresh 32 KiB buffer, however small the
// value. A gateway call decodes about nine values (the request, its
// params, _meta, the downstream response, its result and content), so
// about 300 KB per call are that buffer. The patch parses the bytes it
// already has (segmentio's Parse, same flags).
//
//	go test -run '^$' -bench InternalJSON -benchmem ./testplugins/sdkfloor/

// callResponse is a tools/call response as mcp-demo's echo sends it.
var callResponse = []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"hello"}],"structuredContent":{"text":"hello"}}}`)

// wireMessage has the fields go-sdk's jsonrpc2 wire combined message has.
type wireMessage struct {
	VersionTag string           `json:"jsonrpc"`
	ID         any              `json:"id,omitempty"`
	Method     string           `json:"method,omitempty"`
	Params     json.RawMessage  `json:"params,omitempty"`
	Result     json.RawMessage  `json:"result,omitempty"`
	Error      *json.RawMessage `json:"error,omitempty"`
}

// BenchmarkInternalJSON decodes one message three ways: through go-sdk's
// public jsonrpc.DecodeMessage (its internal/json.Unmarshal inside, as
// shipped), the same decoder construction done here (to show the cost is
// the decoder, not the message), and the patched form.
func BenchmarkInternalJSON(b *testing.B) {
	b.Run("go-sdk-DecodeMessage", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsonrpc.DecodeMessage(callResponse); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decoder-per-value", func(b *testing.B) { // what internal/json.Unmarshal does
		b.ReportAllocs()
		for b.Loop() {
			var m wireMessage
			dec := segjson.NewDecoder(bytes.NewReader(callResponse))
			dec.DontMatchCaseInsensitiveStructFields()
			if err := dec.Decode(&m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("patched-Parse", func(b *testing.B) { // the patch
		b.ReportAllocs()
		for b.Loop() {
			var m wireMessage
			if _, err := segjson.Parse(callResponse, &m, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestPatchedParseDecodesTheSame keeps the reproducer honest: the
// patched form decodes what the decoder does, and refuses a field whose
// name differs only in case, as go-sdk must (a security property).
func TestPatchedParseDecodesTheSame(t *testing.T) {
	for _, in := range [][]byte{callResponse, append([]byte(" \n\t"), callResponse...), []byte(`{"JSONRPC":"2.0","id":1,"Result":{}}`), []byte(`{"jsonrpc":"2.0","id":1,"result":{"unterminated"`)} {
		var viaDecoder, viaParse wireMessage
		dec := segjson.NewDecoder(bytes.NewReader(in))
		dec.DontMatchCaseInsensitiveStructFields()
		errD := dec.Decode(&viaDecoder)
		_, errP := segjson.Parse(in, &viaParse, segjson.DontMatchCaseInsensitiveStructFields)
		if (errD == nil) != (errP == nil) {
			t.Fatalf("%s: decoder error %v, Parse error %v", in, errD, errP)
		}
		if errD != nil {
			continue // both refuse it; what they filled in before is not used
		}
		a, _ := json.Marshal(viaDecoder)
		p, _ := json.Marshal(viaParse)
		if !bytes.Equal(a, p) {
			t.Errorf("%s: decoder gives %s, Parse gives %s", in, a, p)
		}
	}
	var m wireMessage
	if _, err := segjson.Parse([]byte(`{"jsonrpc":"2.0","RESULT":{"x":1}}`), &m, segjson.DontMatchCaseInsensitiveStructFields); err != nil || m.Result != nil {
		t.Errorf("a case-insensitive field was matched: %v %s", err, m.Result)
	}
}
