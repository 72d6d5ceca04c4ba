package catalog

import "github.com/modelcontextprotocol/go-sdk/mcp"

// ResourceInfo is one resource as its server listed it. Resource.URI is
// the URI sent back in resources/read; it is never rewritten here (the
// gateway owns any rewrite needed to keep URIs unique upstream).
type ResourceInfo struct {
	Server   string
	Resource *mcp.Resource
}

// TemplateInfo is one resource template as its server listed it.
type TemplateInfo struct {
	Server   string
	Template *mcp.ResourceTemplate
}

// PromptInfo is one prompt as its server listed it. Prompt.Name is the
// raw name sent back in prompts/get.
type PromptInfo struct {
	Server string
	Prompt *mcp.Prompt
}
