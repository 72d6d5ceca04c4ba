package identity

import "context"

// Caller is who made a call. The zero value and nil both mean "unknown":
// a single-user setup (stdio, or serve with a static token).
type Caller struct {
	// Subject is the token's sub claim, unique per issuer.
	Subject string `json:"subject"`
	// Issuer is the token's iss claim.
	Issuer string `json:"issuer,omitempty"`
	// ClientID is the OAuth client the token was issued to (client_id or
	// azp claim).
	ClientID string `json:"client_id,omitempty"`
	// Email is the token's email claim, if the issuer puts one in.
	Email string `json:"email,omitempty"`
	// Groups is the token's groups claim (or the one auth's
	// groups_claim names).
	Groups []string `json:"groups,omitempty"`
	// Scopes are the scopes the token grants.
	Scopes []string `json:"scopes,omitempty"`
	// Claims are further claims the operator selected (auth's claims),
	// as text: strings as they are, anything else as JSON.
	Claims map[string]string `json:"claims,omitempty"`
}

// Key is what tells callers apart: issuer and subject. "" for nil.
func (c *Caller) Key() string {
	if c == nil || c.Subject == "" {
		return ""
	}
	return c.Issuer + "\x00" + c.Subject
}

// Name is the caller's subject for texts, "" for nil.
func (c *Caller) Name() string {
	if c == nil {
		return ""
	}
	return c.Subject
}

type ctxKey struct{}

// With returns ctx carrying c.
func With(ctx context.Context, c *Caller) context.Context {
	if c == nil {
		return ctx
	}
	return context.WithValue(ctx, ctxKey{}, c)
}

// From returns the caller ctx carries, or nil.
func From(ctx context.Context) *Caller {
	c, _ := ctx.Value(ctxKey{}).(*Caller)
	return c
}

// Client is the upstream program that sent a request, as it named itself
// in initialize (clientInfo). Without serve { auth } it is all that is
// known of who asked; it is not authenticated, only recorded.
type Client struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

type clientKey struct{}

// WithClient returns ctx carrying c.
func WithClient(ctx context.Context, c *Client) context.Context {
	if c == nil {
		return ctx
	}
	return context.WithValue(ctx, clientKey{}, c)
}

// ClientFrom returns the client ctx carries, or nil.
func ClientFrom(ctx context.Context) *Client {
	c, _ := ctx.Value(clientKey{}).(*Client)
	return c
}
