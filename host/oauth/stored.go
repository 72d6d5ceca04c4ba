package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"
)

// LoginRequiredError says the host holds no credentials a server accepts
// and cannot get any without the user: run `toolgate login <server>`.
type LoginRequiredError struct {
	Server string
	// Scope is the scope the server asked for, for a step-up.
	Scope string
	// Reason is why the stored credentials failed, when there were some.
	Reason error
}

func (e *LoginRequiredError) Error() string {
	var s string
	switch {
	case e.Scope != "":
		s = fmt.Sprintf("the %s MCP server needs scope %q, which the stored login does not grant", e.Server, e.Scope)
	case e.Reason != nil:
		s = fmt.Sprintf("the stored login for the %s MCP server no longer works (%v)", e.Server, e.Reason)
	default:
		s = fmt.Sprintf("the %s MCP server refused the stored login", e.Server)
	}
	return s + fmt.Sprintf(": run `toolgate login %s`", e.Server)
}

func (e *LoginRequiredError) Unwrap() error { return e.Reason }

// StoredOptions configures the runtime handler of a server the user
// logged in to.
type StoredOptions struct {
	Server     string
	URL        string
	Store      *Store
	HTTPClient *http.Client
	Logger     hclog.Logger
}

// Stored is the OAuth handler a running host uses for a server with
// stored credentials. It sends the stored token, refreshes it before it
// expires, and when the server still refuses it, tries a token another
// host stored or a forced refresh. It never starts a login: that needs a
// human, and it answers with a *LoginRequiredError instead.
type Stored struct {
	server string
	ts     *tokenSource
}

var _ auth.OAuthHandler = (*Stored)(nil)

// NewStored returns the runtime handler for the entry e loaded from
// opts.Store.
func NewStored(opts StoredOptions, e *Entry) *Stored {
	key := Key{Server: opts.Server, URL: opts.URL}
	return &Stored{server: opts.Server, ts: newTokenSource(opts.Store, key, e, opts.HTTPClient, opts.Logger)}
}

// TokenSource implements auth.OAuthHandler.
func (s *Stored) TokenSource(context.Context) (oauth2.TokenSource, error) { return s.ts, nil }

// Authorize implements auth.OAuthHandler.
func (s *Stored) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	cs := challenges(resp)
	if scope, ok := scopeChallenge(resp, cs); ok {
		return &LoginRequiredError{Server: s.server, Scope: scope}
	}
	if resp.StatusCode != http.StatusUnauthorized {
		return fmt.Errorf("the %s MCP server refused access (HTTP %d)", s.server, resp.StatusCode)
	}
	// The server refused a token we thought valid: revoked, or rotated by
	// another host. A token other than the refused one is worth one retry.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
	defer cancel()
	if err := s.ts.renew(ctx, bearerOf(req)); err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) || errors.As(err, new(*CorruptError)) {
			return &LoginRequiredError{Server: s.server, Reason: err}
		}
		return err
	}
	return nil
}

// Status describes stored credentials for `toolgate servers`:
// "oauth (expires in 50m)", "oauth (expired, refreshes on use)",
// "oauth (expired, login required)" or "oauth".
func Status(e *Entry, now time.Time) string {
	switch {
	case e.ExpiresAt.IsZero():
		return "oauth"
	case now.Before(e.ExpiresAt):
		return "oauth (expires in " + roundDuration(e.ExpiresAt.Sub(now)) + ")"
	case e.RefreshToken != "":
		return "oauth (expired, refreshes on use)"
	}
	return "oauth (expired, login required)"
}

func roundDuration(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	case d >= time.Hour:
		return fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}

// Refusing returns a handler that answers every authorization request with
// err: for a server whose credentials cannot be read (a corrupt file), so
// the failure says why instead of looking like a plain logout.
func Refusing(server string, err error) auth.OAuthHandler { return refusing{server, err} }

type refusing struct {
	server string
	err    error
}

func (r refusing) TokenSource(context.Context) (oauth2.TokenSource, error) { return nil, nil }

func (r refusing) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	_ = resp.Body.Close()
	return &LoginRequiredError{Server: r.server, Reason: r.err}
}
