package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/oauth2"
)

// RefreshSkew is how long before its expiry a token is refreshed, so a
// request never leaves with a token about to die in flight.
const RefreshSkew = 30 * time.Second

// refreshTimeout bounds one refresh, including the wait for another host
// that holds the credentials lock.
const refreshTimeout = 45 * time.Second

// tokenSource hands out the stored access token and refreshes it when it
// is within RefreshSkew of expiry. Every change is written to the store at
// once: a refresh token the server rotates is only good once, and a host
// that lost it would be logged out.
type tokenSource struct {
	store  *Store // nil: memory only
	key    Key
	client *http.Client
	now    func() time.Time
	log    hclog.Logger

	mu    sync.Mutex
	entry Entry
}

func newTokenSource(store *Store, key Key, e *Entry, client *http.Client, log hclog.Logger) *tokenSource {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &tokenSource{store: store, key: key, client: client, now: time.Now, log: log, entry: *e}
}

// Token returns a token good for at least RefreshSkew, refreshing it
// first when needed. go-sdk calls it for every request.
func (ts *tokenSource) Token() (*oauth2.Token, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.fresh(&ts.entry) {
		return ts.entry.token(), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
	defer cancel()
	if err := ts.refreshLocked(ctx, ""); err != nil {
		return nil, err
	}
	return ts.entry.token(), nil
}

func (ts *tokenSource) fresh(e *Entry) bool {
	return e.AccessToken != "" && (e.ExpiresAt.IsZero() || ts.now().Add(RefreshSkew).Before(e.ExpiresAt))
}

// renew gets a token other than refused, the one a server just rejected:
// a newer one another host stored, or a refreshed one.
func (ts *tokenSource) renew(ctx context.Context, refused string) error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.refreshLocked(ctx, refused)
}

// current returns a copy of the credentials in use.
func (ts *tokenSource) current() Entry {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.entry
}

// refreshLocked refreshes under the store's lock. A token another host
// stored meanwhile is adopted instead, unless it is refused. Called with
// ts.mu held.
func (ts *tokenSource) refreshLocked(ctx context.Context, refused string) error {
	if ts.store == nil {
		next, err := ts.refresh(ctx, &ts.entry)
		if err != nil {
			return err
		}
		ts.entry = *next
		return nil
	}
	return ts.store.Update(ctx, ts.key, func(stored *Entry) (*Entry, error) {
		base := &ts.entry
		if stored != nil {
			if stored.AccessToken != ts.entry.AccessToken && stored.AccessToken != refused && ts.fresh(stored) {
				ts.log.Debug("adopting a token another toolgate refreshed")
				ts.entry = *stored
				return stored, nil
			}
			// Its refresh token is the newest: another host may have
			// rotated ours away.
			base = stored
		}
		next, err := ts.refresh(ctx, base)
		if err != nil {
			return stored, err
		}
		ts.entry = *next
		return next, nil
	})
}

// errNoRefreshToken is dressed as the OAuth error go-sdk understands: it
// then sends the request without a token, and the server's 401 reaches the
// handler, which says to log in.
var errNoRefreshToken = &oauth2.RetrieveError{
	ErrorCode:        "invalid_grant",
	ErrorDescription: "the access token expired and the server issued no refresh token",
}

// refresh runs the refresh_token grant for e and returns the new entry.
func (ts *tokenSource) refresh(ctx context.Context, e *Entry) (*Entry, error) {
	if e.RefreshToken == "" {
		return nil, errNoRefreshToken
	}
	cfg := oauth2.Config{
		ClientID:     e.ClientID,
		ClientSecret: e.ClientSecret,
		Endpoint:     oauth2.Endpoint{TokenURL: e.TokenURL, AuthStyle: authStyle(e.AuthStyle)},
	}
	// Exchange with the grant overridden, as go-sdk does for its own
	// grants: the plain refresh path of oauth2 cannot send the RFC 8707
	// resource, which some servers need to mint a token for this server.
	opts := []oauth2.AuthCodeOption{
		oauth2.SetAuthURLParam("grant_type", "refresh_token"),
		oauth2.SetAuthURLParam("refresh_token", e.RefreshToken),
	}
	if e.Resource != "" {
		opts = append(opts, oauth2.SetAuthURLParam("resource", e.Resource))
	}
	tok, err := cfg.Exchange(withClient(ctx, ts.client), "", opts...)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return nil, &RefreshError{Server: ts.key.Server, Err: re}
		}
		return nil, fmt.Errorf("refreshing the OAuth token for %q: %w", ts.key.Server, err)
	}
	next := *e
	next.AccessToken = tok.AccessToken
	next.TokenType = tok.TokenType
	next.ExpiresAt = tok.Expiry
	if tok.RefreshToken != "" {
		next.RefreshToken = tok.RefreshToken
	}
	ts.log.Debug("refreshed the OAuth token", "expires", next.ExpiresAt, "rotated_refresh_token", tok.RefreshToken != "" && tok.RefreshToken != e.RefreshToken)
	return &next, nil
}

func withClient(ctx context.Context, c *http.Client) context.Context {
	if c == nil {
		return ctx
	}
	return context.WithValue(ctx, oauth2.HTTPClient, c)
}

// RefreshError is an authorization server refusing a refresh. With
// ErrorCode "invalid_grant" the refresh token is dead: the user must log
// in again. Its text never quotes the response body, which may echo
// credentials.
type RefreshError struct {
	Server string
	Err    *oauth2.RetrieveError
}

func (e *RefreshError) Error() string {
	s := fmt.Sprintf("refreshing the OAuth token for %q: the authorization server refused", e.Server)
	if e.Err.ErrorCode != "" {
		s += " with " + e.Err.ErrorCode
		if e.Err.ErrorDescription != "" {
			s += fmt.Sprintf(" (%s)", e.Err.ErrorDescription)
		}
	} else if e.Err.Response != nil {
		s += " with HTTP " + e.Err.Response.Status
	}
	return s
}

func (e *RefreshError) Unwrap() error { return e.Err }
