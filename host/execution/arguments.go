package execution

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ArgumentsError is argument text the host refuses before contacting the
// server. The router returns its text to the model as an error result so
// the model can correct the call; it is never retried as is.
type ArgumentsError struct {
	// Offset is the byte offset of the syntax error in the argument text,
	// or -1 when the text is valid JSON of the wrong kind.
	Offset int64
	msg    string
}

func (e *ArgumentsError) Error() string { return e.msg }

// ParseArguments checks the model's argument text for tools/call and
// returns it as the JSON object to send, untouched: numbers and key order
// reach the server exactly as the model wrote them, and nothing is decoded
// on the hot path.
//
// Empty or whitespace-only text means "no arguments" and returns (nil,
// nil). Invalid JSON returns an [*ArgumentsError] whose text starts with
// "err: " and names the byte offset; valid JSON that is not an object
// returns "MCP tool arguments must be a JSON object, got <kind>".
func ParseArguments(raw []byte) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, nil
	}
	if !json.Valid(raw) {
		// Unmarshal reports where the text goes wrong; only the error
		// path pays for it.
		return nil, syntaxError(raw, json.Unmarshal(raw, new(json.RawMessage)))
	}
	if raw[0] != '{' {
		return nil, &ArgumentsError{Offset: -1, msg: "MCP tool arguments must be a JSON object, got " + jsonKind(raw[0])}
	}
	return json.RawMessage(raw), nil
}

func syntaxError(raw []byte, err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return &ArgumentsError{Offset: 0, msg: "err: invalid JSON in tool arguments: " + err.Error() + "; send the arguments as one JSON object"}
	}
	// SyntaxError.Offset counts the bytes read including the offending
	// one; report the offending byte's own 0-based offset.
	offset, reason := se.Offset-1, se.Error()
	end := int64(len(raw))
	// encoding/json reports a literal cut off by the end of the text
	// (`tru`) as an invalid ' ' at the end; say what happened.
	truncatedLiteral := se.Offset >= end && raw[end-1] != ' ' && strings.HasPrefix(reason, "invalid character ' ' in literal")
	if truncatedLiteral || reason == "unexpected end of JSON input" {
		offset, reason = end, "unexpected end of JSON input"
	}
	offset = max(offset, 0)
	return &ArgumentsError{
		Offset: offset,
		msg:    fmt.Sprintf("err: invalid JSON in tool arguments at byte offset %d: %s; send the arguments as one JSON object", offset, reason),
	}
}

// jsonKind names the kind of a valid JSON text from its first byte.
func jsonKind(first byte) string {
	switch first {
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}
