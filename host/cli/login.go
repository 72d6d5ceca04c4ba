package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/manager"
	"github.com/toolgate/toolgate/host/mcpclient"
	"github.com/toolgate/toolgate/host/oauth"
)

func newLoginCmd(g *globals) *cobra.Command {
	var noBrowser bool
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "login <server>",
		Short: "Log in to a remote MCP server with OAuth and store the credentials",
		Long: `Log in to the Streamable HTTP server of that name: discover its authorization
server, register (dynamically, or with client_id from the server's oauth block),
print the authorization URL (and open the browser when there is one), wait for
the browser to come back to a loopback callback on 127.0.0.1, and store the
tokens. Every later toolgate run uses and refreshes them; run login again when
they stop working.

Credentials live in the user config directory (toolgate/credentials.json,
mode 0600), or at $TOOLGATE_CREDENTIALS. A bearer_token_env_var or an explicit
Authorization header in the server block takes precedence over a login.

Exit codes: 0 logged in (or the server needs no login); 1 the login failed;
2 bad usage or configuration.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			srv, err := g.remoteServer(args[0])
			if err != nil {
				return err
			}
			if srv.OAuth != nil && srv.OAuth.Grant == "client_credentials" {
				fmt.Fprintf(g.io.Out, "The %s MCP server uses the client_credentials grant: toolgate authenticates as itself at every start, so there is nothing to log in to.\n", srv.Name)
				return nil
			}
			store, err := manager.CredentialStore(g.io.LookupEnv)
			if err != nil {
				return exit(ExitFailure, err)
			}
			var secret string
			if srv.OAuth != nil && srv.OAuth.ClientSecretEnvVar != "" {
				v, ok := g.io.LookupEnv(srv.OAuth.ClientSecretEnvVar)
				if !ok || strings.TrimSpace(v) == "" {
					return exit(ExitFailure, fmt.Errorf("environment variable %s for the client secret of MCP server %q is not set: export it, or remove client_secret_env_var for a public client", srv.OAuth.ClientSecretEnvVar, srv.Name))
				}
				secret = strings.TrimSpace(v)
			}
			opts := oauth.LoginOptions{
				Server:       srv.Name,
				URL:          srv.URL,
				OAuth:        srv.OAuth,
				ClientSecret: secret,
				Store:        store,
				Out:          g.io.Err,
				Wait:         wait,
				Logger:       g.logger().Named("oauth"),
			}
			if !noBrowser {
				opts.Browser = oauth.SystemBrowser(g.io.LookupEnv)
			}
			login, err := oauth.NewLogin(opts)
			if err != nil {
				return exit(ExitFailure, err)
			}
			defer login.Close()

			copts := manager.LoginClientOptions(srv, g.io.LookupEnv, nil, login)
			copts.Logger = g.logger().Named("mcpclient")
			c, err := mcpclient.New(copts)
			if err != nil {
				return exit(ExitFailure, err)
			}
			defer c.Close()
			ctx := cmd.Context()
			if err := c.Connect(ctx); err != nil {
				return exit(ExitFailure, loginError(srv, err))
			}
			tools, err := c.ListTools(ctx)
			if err != nil {
				return exit(ExitFailure, loginError(srv, err))
			}
			if !login.Authorized() {
				fmt.Fprintf(g.io.Out, "The %s MCP server did not ask for authorization: nothing to log in to (%d tools available).\n", srv.Name, len(tools))
				return nil
			}
			fmt.Fprintf(g.io.Out, "Logged in to %s: %d tools available. Credentials saved in %s.\n", srv.Name, len(tools), store.Path())
			if e := login.Entry(); e != nil && !e.ExpiresAt.IsZero() {
				refresh := "no refresh token: run `toolgate login " + srv.Name + "` again then"
				if e.RefreshToken != "" {
					refresh = "toolgate refreshes it before then"
				}
				fmt.Fprintf(g.io.Out, "The access token expires at %s (%s).\n", e.ExpiresAt.Local().Format(time.DateTime), refresh)
			}
			if srv.BearerTokenEnvVar != "" {
				fmt.Fprintf(g.io.Out, "Note: bearer_token_env_var is set for %s, and that token is used instead of this login. Remove it to use the login.\n", srv.Name)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&noBrowser, "no-browser", false, "only print the authorization URL; do not open a browser")
	cmd.Flags().DurationVar(&wait, "timeout", oauth.DefaultLoginWait, "how long to wait for the browser to come back")
	return cmd
}

func newLogoutCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "logout <server>",
		Short: "Forget the OAuth login stored for a remote MCP server",
		Long: `Remove the credentials ` + "`toolgate login`" + ` stored for the server of that name (and
its URL) from the credentials file. The authorization server is not told.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			srv, err := g.remoteServer(args[0])
			if err != nil {
				return err
			}
			store, err := manager.CredentialStore(g.io.LookupEnv)
			if err != nil {
				return exit(ExitFailure, err)
			}
			had, err := store.Delete(cmd.Context(), oauth.Key{Server: srv.Name, URL: srv.URL})
			if err != nil {
				return exit(ExitFailure, fmt.Errorf("logging out of %s: %w", srv.Name, err))
			}
			if had {
				fmt.Fprintf(g.io.Out, "Removed the stored login for %s.\n", srv.Name)
			} else {
				fmt.Fprintf(g.io.Out, "No stored login for %s.\n", srv.Name)
			}
			return nil
		},
	}
}

// remoteServer loads the configuration and finds the Streamable HTTP
// server block called name in it.
func (g *globals) remoteServer(name string) (config.Server, error) {
	cfg, err := g.loadConfig()
	if err != nil {
		return config.Server{}, err
	}
	var names []string
	for _, s := range cfg.Servers {
		if s.Name == name {
			if s.Transport != config.TransportHTTP {
				return s, exit(ExitUsage, fmt.Errorf("server %q runs a local command; login is for servers with a url", name))
			}
			return s, nil
		}
		if s.Transport == config.TransportHTTP {
			names = append(names, s.Name)
		}
	}
	hint := "the configuration has no server with a url"
	if len(names) > 0 {
		hint = "servers with a url: " + strings.Join(names, ", ")
	}
	return config.Server{}, exit(ExitUsage, fmt.Errorf("no server %q in the configuration (%s)", name, hint))
}

// loginError words why a login did not complete.
func loginError(srv config.Server, err error) error {
	var ae *mcpclient.AuthError
	if errors.As(err, &ae) && ae.Err != nil {
		return fmt.Errorf("logging in to %s: %w", srv.Name, ae.Err)
	}
	return fmt.Errorf("logging in to %s: %w", srv.Name, err)
}
