package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/mcpclient"
	"github.com/toolgate/toolgate/host/oauth"
)

// authCodeScenarios are played as `toolgate login`: the interactive
// authorization code flow, with the authorization server's redirect
// fetched by a headless stand-in for the browser.
var authCodeScenarios = []string{
	"auth/metadata-default",
	"auth/metadata-var1",
	"auth/metadata-var2",
	"auth/metadata-var3",
	"auth/basic-cimd",
	"auth/scope-from-www-authenticate",
	"auth/scope-from-scopes-supported",
	"auth/scope-omitted-when-undefined",
	"auth/scope-step-up",
	"auth/scope-retry-limit",
	"auth/token-endpoint-auth-basic",
	"auth/token-endpoint-auth-post",
	"auth/token-endpoint-auth-none",
	"auth/pre-registration",
	"auth/2025-03-26-oauth-metadata-backcompat",
	"auth/2025-03-26-oauth-endpoint-fallback",
	"auth/resource-mismatch",
	"auth/offline-access-scope",
	"auth/offline-access-not-supported",
}

// ClientMetadataURL is the client ID metadata document the suite's
// authorization servers expect (auth/basic-cimd); the host offers one
// only when configured to, as here.
const ClientMetadataURL = "https://conformance-test.local/client-metadata.json"

// scenarioCredentials is MCP_CONFORMANCE_CONTEXT of the auth scenarios:
// what a user would have put in the server's oauth block or environment.
type scenarioCredentials struct {
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`
	IdPClientID      string `json:"idp_client_id"`
	IdPIDToken       string `json:"idp_id_token"`
	IdPIssuer        string `json:"idp_issuer"`
	IdPTokenEndpoint string `json:"idp_token_endpoint"`
	IdPClientSecret  string `json:"idp_client_secret"`
}

func credentials(env scenarioEnv) (scenarioCredentials, error) {
	var c scenarioCredentials
	if len(env.context) == 0 {
		return c, nil
	}
	if err := json.Unmarshal(env.context, &c); err != nil {
		// Never quote it: it holds secrets.
		return c, fmt.Errorf("reading %s: not the expected JSON object", ContextEnv)
	}
	return c, nil
}

// runLogin: `toolgate login` against the scenario's server — discovery,
// registration (dynamic, metadata document or the pre-registered client
// of the context), PKCE, the loopback callback, the token stored in a
// throwaway credentials file — then list tools and call test-tool.
func runLogin(ctx context.Context, env scenarioEnv) (err error) {
	creds, err := credentials(env)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "toolgate-conformance-")
	if err != nil {
		return fmt.Errorf("creating a credentials directory: %w", err)
	}
	defer os.RemoveAll(dir)

	login, err := oauth.NewLogin(oauth.LoginOptions{
		Server:            "conformance",
		URL:               env.serverURL,
		OAuth:             &config.OAuth{ClientID: creds.ClientID, Grant: "authorization_code"},
		ClientSecret:      creds.ClientSecret,
		Store:             oauth.NewStore(filepath.Join(dir, "credentials.json")),
		ClientMetadataURL: ClientMetadataURL,
		Browser:           headlessBrowser(env.log.Named("browser")),
		Out:               logWriter{env.log.Named("login")},
		Wait:              10 * time.Second,
		Logger:            env.log.Named("oauth"),
	})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := login.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("closing the login: %w", cerr)
		}
	}()
	return callTestTool(ctx, env, login)
}

// runClientCredentials: a machine-to-machine server (oauth { grant =
// "client_credentials" … }) with a client secret or a private key.
func runClientCredentials(ctx context.Context, env scenarioEnv) error {
	creds, err := credentials(env)
	if err != nil {
		return err
	}
	h, err := oauth.NewClientCredentials(oauth.ClientCredentialsOptions{
		Server:        "conformance",
		URL:           env.serverURL,
		ClientID:      creds.ClientID,
		ClientSecret:  creds.ClientSecret,
		PrivateKeyPEM: []byte(creds.PrivateKeyPEM),
	})
	if err != nil {
		return err
	}
	return callTestTool(ctx, env, h)
}

// runCrossApp: cross-app access with the ID token the scenario's identity
// provider issued.
func runCrossApp(ctx context.Context, env scenarioEnv) error {
	creds, err := credentials(env)
	if err != nil {
		return err
	}
	h, err := oauth.NewCrossApp(oauth.CrossAppOptions{
		Server:           "conformance",
		URL:              env.serverURL,
		ClientID:         creds.ClientID,
		ClientSecret:     creds.ClientSecret,
		IDToken:          func(context.Context) (string, error) { return creds.IdPIDToken, nil },
		IdPTokenEndpoint: creds.IdPTokenEndpoint,
		IdPClientID:      creds.IdPClientID,
		IdPClientSecret:  creds.IdPClientSecret,
	})
	if err != nil {
		return err
	}
	return callTestTool(ctx, env, h)
}

func callTestTool(ctx context.Context, env scenarioEnv, h auth.OAuthHandler) (err error) {
	c, err := connectWith(ctx, env, mcpclient.Handlers{}, h)
	if err != nil {
		return err
	}
	defer closeClient(c, &err)
	_, err = callListedTool(ctx, env, c, "test-tool", map[string]any{})
	return err
}

// headlessBrowser stands in for the user's browser: it fetches the
// authorization URL without following the redirect (the suite's
// authorization server answers at once with a 302 carrying code and
// state), then delivers that redirect to the login's loopback callback.
func headlessBrowser(log hclog.Logger) func(ctx context.Context, authURL string) error {
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(ctx context.Context, u string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp, nil
	}
	return func(ctx context.Context, authURL string) error {
		resp, err := get(ctx, authURL)
		if err != nil {
			return fmt.Errorf("fetching the authorization URL: %w", err)
		}
		loc := resp.Header.Get("Location")
		if resp.StatusCode/100 != 3 || loc == "" {
			return fmt.Errorf("the authorization URL answered HTTP %d without a redirect", resp.StatusCode)
		}
		log.Debug("authorization server redirected", "status", resp.StatusCode)
		back, err := get(ctx, loc)
		if err != nil {
			return fmt.Errorf("following the redirect to the callback: %w", err)
		}
		if back.StatusCode != http.StatusOK {
			return errors.New("the login callback refused the redirect")
		}
		return nil
	}
}

// logWriter turns the login's instructions into log lines.
type logWriter struct{ log hclog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimSpace(string(p)), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			w.log.Info(line)
		}
	}
	return len(p), nil
}
