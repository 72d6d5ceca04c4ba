package manager

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/mcpclient"
	"github.com/toolgate/toolgate/host/oauth"
)

// How an HTTP server authenticates, in order of precedence:
//  1. a bearer token (bearer_token_env_var) or an explicit Authorization
//     header (http_headers, env_http_headers): sent as is, no OAuth;
//  2. oauth { grant = "client_credentials" }: the host authenticates as
//     itself at every start;
//  3. credentials stored by `toolgate login <server>`: refreshed as
//     needed, never a new login;
//  4. nothing: a server that asks for authorization fails to start with
//     a hint to run `toolgate login <server>`.

const grantClientCredentials = "client_credentials"

// withOAuth completes h with the server's OAuth handler, if it has one.
func (m *Manager) withOAuth(cfg config.Server, h *mcpclient.HTTP) (*mcpclient.HTTP, error) {
	if h.Header.Get("Authorization") != "" {
		return h, nil
	}
	if o := cfg.OAuth; o != nil && o.Grant == grantClientCredentials {
		handler, err := clientCredentials(cfg, m.lookupEnv, h.Client)
		if err != nil {
			return nil, err
		}
		h.OAuth = handler
		return h, nil
	}
	store, err := CredentialStore(m.lookupEnv)
	if err != nil {
		m.log.Warn("no credentials file; stored OAuth logins are unavailable", "server", cfg.Name, "error", err)
		return h, nil
	}
	key := oauth.Key{Server: cfg.Name, URL: cfg.URL}
	entry, err := store.Load(key)
	switch {
	case err != nil:
		// Not a crash and not a silent logout: the server starts if it
		// needs no login, and says why it cannot log in if it does.
		m.log.Error("cannot read stored OAuth credentials", "server", cfg.Name, "error", err)
		h.OAuth = oauth.Refusing(cfg.Name, err)
	case entry != nil:
		h.OAuth = oauth.NewStored(oauth.StoredOptions{
			Server:     cfg.Name,
			URL:        cfg.URL,
			Store:      store,
			HTTPClient: h.Client,
			Logger:     m.log.Named("oauth").With("server", cfg.Name),
		}, entry)
	}
	return h, nil
}

// CredentialStore is the credentials file `toolgate login` writes and
// hosts read: $TOOLGATE_CREDENTIALS, else the user config directory.
func CredentialStore(lookupEnv func(string) (string, bool)) (*oauth.Store, error) {
	path, err := oauth.DefaultPath(lookupEnv)
	if err != nil {
		return nil, err
	}
	return oauth.NewStore(path), nil
}

// clientCredentials builds the handler of a machine-to-machine server.
// Secrets are read here, at connect time, and never quoted.
func clientCredentials(cfg config.Server, lookupEnv func(string) (string, bool), client *http.Client) (auth.OAuthHandler, error) {
	o := cfg.OAuth
	opts := oauth.ClientCredentialsOptions{
		Server:     cfg.Name,
		URL:        cfg.URL,
		ClientID:   o.ClientID,
		Scopes:     o.Scopes,
		Resource:   o.Resource,
		HTTPClient: client,
	}
	if o.ClientSecretEnvVar != "" {
		v, ok := lookupEnv(o.ClientSecretEnvVar)
		if !ok || strings.TrimSpace(v) == "" {
			return nil, fmt.Errorf("Environment variable %s for the client secret of MCP server '%s' is not set", o.ClientSecretEnvVar, cfg.Name)
		}
		opts.ClientSecret = strings.TrimSpace(v)
	}
	if o.PrivateKeyFile != "" {
		b, err := os.ReadFile(o.PrivateKeyFile)
		if err != nil {
			return nil, fmt.Errorf("reading private_key_file of MCP server '%s': %w", cfg.Name, err)
		}
		opts.PrivateKeyPEM = b
	}
	return oauth.NewClientCredentials(opts)
}

// hasStaticAuthorization reports whether cfg sends its own Authorization
// header, which wins over any OAuth login.
func hasStaticAuthorization(cfg config.Server, lookupEnv func(string) (string, bool)) bool {
	if cfg.BearerTokenEnvVar != "" {
		return true
	}
	for k := range cfg.HTTPHeaders {
		if strings.EqualFold(k, "Authorization") {
			return true
		}
	}
	for k, env := range cfg.EnvHTTPHeaders {
		if v, ok := lookupEnv(env); ok && strings.TrimSpace(v) != "" && strings.EqualFold(k, "Authorization") {
			return true
		}
	}
	return false
}

// authState is the AUTH column of `toolgate servers`: "bearer",
// "client credentials", "oauth (expires in 50m)", "login required",
// "credentials file corrupt" or "none"; "" for stdio servers.
func (m *Manager) authState(cfg config.Server, startErr error) string {
	if cfg.Transport != config.TransportHTTP {
		return ""
	}
	if hasStaticAuthorization(cfg, m.lookupEnv) {
		return "bearer"
	}
	if cfg.OAuth != nil && cfg.OAuth.Grant == grantClientCredentials {
		return "client credentials"
	}
	var ae *mcpclient.AuthError
	refused := errors.As(startErr, &ae) && ae.Challenge
	var entry *oauth.Entry
	if store, err := CredentialStore(m.lookupEnv); err == nil {
		entry, err = store.Load(oauth.Key{Server: cfg.Name, URL: cfg.URL})
		if err != nil {
			return "credentials file corrupt"
		}
	}
	switch {
	case refused:
		return "login required"
	case entry != nil:
		return oauth.Status(entry, time.Now())
	}
	return "none"
}

// oauthHint words a refusal the OAuth handler explained.
func oauthHint(cfg config.Server, e *mcpclient.AuthError) (string, bool) {
	var lr *oauth.LoginRequiredError
	var rm *oauth.ResourceMismatchError
	var ce *oauth.CorruptError
	switch {
	case errors.As(e.Err, &ce):
		return fmt.Sprintf("The %s MCP server needs a login, but %v.", cfg.Name, ce), true
	case errors.As(e.Err, &rm):
		return fmt.Sprintf("The %s MCP server asked for authorization, but its metadata is for another resource: %v.", cfg.Name, rm), true
	case errors.As(e.Err, &lr) && lr.Scope != "":
		return fmt.Sprintf("The %s MCP server needs scope %q, which the stored login does not grant. Run `toolgate login %s` to grant it.", cfg.Name, lr.Scope, cfg.Name), true
	case errors.As(e.Err, &lr) && lr.Reason != nil:
		return fmt.Sprintf("The stored login for the %s MCP server no longer works (%v). Run `toolgate login %s`.", cfg.Name, lr.Reason, cfg.Name), true
	case errors.As(e.Err, &lr):
		return fmt.Sprintf("The %s MCP server refused the stored login. Run `toolgate login %s`.", cfg.Name, cfg.Name), true
	case e.Err != nil && cfg.OAuth != nil && cfg.OAuth.Grant == grantClientCredentials:
		return fmt.Sprintf("The %s MCP server refused the client credentials (%v). Check client_id, client_secret_env_var or private_key_file in the server %q block%s.", cfg.Name, e.Err, cfg.Name, at(cfg)), true
	}
	return "", false
}

// LoginClientOptions are the MCP client options of `toolgate login`: the
// server's URL and static headers without any Authorization (the login
// is what replaces it), with handler as the OAuth handler.
func LoginClientOptions(cfg config.Server, lookupEnv func(string) (string, bool), client *http.Client, handler auth.OAuthHandler) mcpclient.Options {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	h := http.Header{}
	for k, v := range cfg.HTTPHeaders {
		h.Set(k, v)
	}
	for k, env := range cfg.EnvHTTPHeaders {
		if v, ok := lookupEnv(env); ok && strings.TrimSpace(v) != "" {
			h.Set(k, v)
		}
	}
	h.Del("Authorization")
	return mcpclient.Options{
		Name:            cfg.Name,
		ProtocolVersion: cfg.ProtocolVersion,
		HTTP:            &mcpclient.HTTP{URL: cfg.URL, Header: h, Client: client, OAuth: handler},
	}
}

// tokenRefusedHint words a plain 401/403 (no challenge) to a server
// configured with a bearer token: the token is what it refused.
func tokenRefusedHint(cfg config.Server, err error) (string, bool) {
	var he *mcpclient.HTTPError
	if cfg.BearerTokenEnvVar == "" || !errors.As(err, &he) ||
		(he.Status != http.StatusUnauthorized && he.Status != http.StatusForbidden) {
		return "", false
	}
	return fmt.Sprintf("The %s MCP server rejected the token in %s (%v). Put a valid token in that environment variable, or remove bearer_token_env_var and run `toolgate login %s`.",
		cfg.Name, cfg.BearerTokenEnvVar, he, cfg.Name), true
}
