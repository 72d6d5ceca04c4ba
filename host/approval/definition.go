package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefinitionHash is the fingerprint a remembered approval is bound to:
// "sha256:" and the hex SHA-256 of the JSON of the tool's raw name,
// description, input schema and annotations (JSON objects are encoded
// with sorted keys, so the same definition always hashes the same). A
// server that changes any of them after the user approved the tool — a
// "rug pull" — gets asked about again. The title is not included: it is
// a display label, and the description says what the tool does.
func DefinitionHash(name, description string, inputSchema any, annotations *mcp.ToolAnnotations) string {
	b, err := json.Marshal(struct {
		Name        string               `json:"name"`
		Description string               `json:"description"`
		InputSchema any                  `json:"inputSchema"`
		Annotations *mcp.ToolAnnotations `json:"annotations"`
	}{name, description, inputSchema, annotations})
	if err != nil {
		// Only a schema that cannot be encoded gets here; hash what can be
		// said about it so that it never matches a real definition.
		b = []byte("unencodable definition: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// definition is the request's tool definition hash.
func (r Request) definition() string {
	return DefinitionHash(r.Tool, r.Description, r.InputSchema, r.Annotations)
}
