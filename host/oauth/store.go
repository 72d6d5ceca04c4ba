package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"golang.org/x/oauth2"
)

// CredentialsEnv overrides where the credentials file lives.
const CredentialsEnv = "TOOLGATE_CREDENTIALS"

// fileVersion is the format of the credentials file.
const fileVersion = 1

// DefaultPath returns $TOOLGATE_CREDENTIALS, else
// <user config dir>/toolgate/credentials.json.
func DefaultPath(lookupEnv func(string) (string, bool)) (string, error) {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	if p, ok := lookupEnv(CredentialsEnv); ok && p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("finding the credentials file: %w (set %s to a path)", err, CredentialsEnv)
	}
	return filepath.Join(dir, "toolgate", "credentials.json"), nil
}

// Key names one server's credentials: the same name pointed at another
// URL is another server and must log in again.
type Key struct {
	Server string
	URL    string
}

func (k Key) id() string {
	sum := sha256.Sum256([]byte(k.URL))
	return k.Server + "|" + hex.EncodeToString(sum[:8])
}

// Entry is what the host keeps for one server after a login.
type Entry struct {
	Server string `json:"server"`
	URL    string `json:"url"`
	// Issuer is the authorization server, when discovery named one.
	Issuer       string `json:"issuer,omitempty"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	TokenURL     string `json:"token_url"`
	// AuthStyle is how the client authenticates at TokenURL: "header"
	// (HTTP Basic), "params" (form fields) or "" (try both).
	AuthStyle string   `json:"auth_style,omitempty"`
	Resource  string   `json:"resource,omitempty"`
	Scopes    []string `json:"scopes,omitempty"`

	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	ExpiresAt    time.Time `json:"expires_at,omitzero"`
	UpdatedAt    time.Time `json:"updated_at,omitzero"`
}

func (e *Entry) token() *oauth2.Token {
	return &oauth2.Token{AccessToken: e.AccessToken, TokenType: e.TokenType, RefreshToken: e.RefreshToken, Expiry: e.ExpiresAt}
}

// sameCredentials ignores UpdatedAt: a write that changes nothing else is
// not worth a write.
func sameCredentials(a, b *Entry) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.UpdatedAt, y.UpdatedAt = time.Time{}, time.Time{}
	return reflect.DeepEqual(x, y)
}

func authStyleName(s oauth2.AuthStyle) string {
	switch s {
	case oauth2.AuthStyleInHeader:
		return "header"
	case oauth2.AuthStyleInParams:
		return "params"
	}
	return ""
}

func authStyle(name string) oauth2.AuthStyle {
	switch name {
	case "header":
		return oauth2.AuthStyleInHeader
	case "params":
		return oauth2.AuthStyleInParams
	}
	return oauth2.AuthStyleAutoDetect
}

type credentialsFile struct {
	Version int               `json:"version"`
	Servers map[string]*Entry `json:"servers"`
}

// CorruptError is a credentials file that cannot be read as one. The host
// refuses to overwrite it (other servers' logins are in it): the user must
// repair or remove it, then log in again.
type CorruptError struct {
	Path string
	Err  error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("the credentials file %s is corrupt (%v): repair it, or move it away and log in again with `toolgate login <server>`", e.Path, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Store is the credentials file. Reads need no lock (writes replace the
// file atomically); every read-modify-write holds a lock file, so hosts
// running at the same time never lose each other's updates.
type Store struct {
	path string
	now  func() time.Time
}

// NewStore returns the store at path; nothing is read until used.
func NewStore(path string) *Store {
	return &Store{path: path, now: time.Now}
}

// Path is where the credentials live.
func (s *Store) Path() string { return s.path }

// Load returns the entry for k, or nil when there is none.
func (s *Store) Load(k Key) (*Entry, error) {
	f, err := s.read()
	if err != nil {
		return nil, err
	}
	return f.entry(k), nil
}

func (f *credentialsFile) entry(k Key) *Entry {
	e := f.Servers[k.id()]
	if e == nil || e.URL != k.URL || e.Server != k.Server {
		return nil
	}
	c := *e
	return &c
}

// Save stores e under k.
func (s *Store) Save(ctx context.Context, k Key, e *Entry) error {
	return s.Update(ctx, k, func(*Entry) (*Entry, error) { return e, nil })
}

// Delete removes k's entry and reports whether there was one.
func (s *Store) Delete(ctx context.Context, k Key) (bool, error) {
	var had bool
	err := s.Update(ctx, k, func(cur *Entry) (*Entry, error) {
		had = cur != nil
		return nil, nil
	})
	return had, err
}

// Update runs fn on k's current entry under the store's lock and writes
// what it returns (nil deletes the entry), unless that is what is already
// stored. fn may do network I/O (a token refresh): other hosts wait.
func (s *Store) Update(ctx context.Context, k Key, fn func(cur *Entry) (*Entry, error)) error {
	unlock, err := lockFile(ctx, s.path+".lock")
	if err != nil {
		return fmt.Errorf("locking %s: %w", s.path, err)
	}
	defer unlock()
	f, err := s.read()
	if err != nil {
		return err
	}
	cur := f.entry(k)
	next, err := fn(cur)
	if err != nil {
		return err
	}
	if next != nil {
		e := *next
		e.Server, e.URL = k.Server, k.URL
		if cur != nil {
			e.UpdatedAt = cur.UpdatedAt
		}
		next = &e
	}
	if sameCredentials(cur, next) {
		return nil
	}
	if next == nil {
		delete(f.Servers, k.id())
	} else {
		next.UpdatedAt = s.now().UTC()
		f.Servers[k.id()] = next
	}
	return s.write(f)
}

func (s *Store) read() (*credentialsFile, error) {
	b, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return &credentialsFile{Version: fileVersion, Servers: map[string]*Entry{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the credentials file: %w", err)
	}
	var f credentialsFile
	if err := json.Unmarshal(b, &f); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			// Never quote the content: it holds secrets.
			err = fmt.Errorf("not valid JSON at byte %d", se.Offset)
		} else {
			err = errors.New("not the expected JSON layout")
		}
		return nil, &CorruptError{Path: s.path, Err: err}
	}
	if f.Version != fileVersion {
		return nil, &CorruptError{Path: s.path, Err: fmt.Errorf("format version %d, this toolgate reads version %d", f.Version, fileVersion)}
	}
	if f.Servers == nil {
		f.Servers = map[string]*Entry{}
	}
	return &f, nil
}

// write replaces the file atomically: a crash leaves the old file or the
// new one, never half of one.
func (s *Store) write(f *credentialsFile) error {
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding credentials: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".credentials-*.tmp")
	if err != nil {
		return fmt.Errorf("writing credentials: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("writing credentials: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("writing credentials: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("writing credentials: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing credentials: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("writing credentials: %w", err)
	}
	return nil
}

func dirOf(path string) string { return filepath.Dir(path) }
