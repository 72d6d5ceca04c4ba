package inbox

import (
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Paths of the page, its API and its live updates.
const (
	PagePath = "/approvals"
	APIPath  = PagePath + "/api/approvals"
)

// CSP is the page's Content-Security-Policy: its own script and style
// only, no inline script or style, no framing, forms post to itself.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// sessionCookie is the browser's approver session; its CSRF token is in
// the page and must come back with every form and API change.
const (
	sessionCookie = "toolgate_approver"
	sessionLife   = 12 * time.Hour
	// cliHeader marks a request from toolgate's CLI on a listener that
	// needs no credential: a page of another site cannot send a custom
	// header without a CORS preflight, which is never granted.
	cliHeader = "X-Toolgate-Client"
)

//go:embed ui
var ui embed.FS

var page = template.Must(template.New("page.html").Funcs(template.FuncMap{
	"pretty": func(raw json.RawMessage) string {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return string(raw)
		}
		b, _ := json.MarshalIndent(v, "", "  ")
		return string(b)
	},
	"hint": func(p *bool) string {
		if p == nil {
			return "not declared"
		}
		if *p {
			return "yes"
		}
		return "no"
	},
	"rfc3339": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"has": func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	},
}).ParseFS(ui, "ui/page.html"))

type browserSession struct {
	who     Approver
	csrf    string
	expires time.Time
}

// handler serves the page, the API and the live updates.
type handler struct {
	in   *Inbox
	auth Authenticate

	mu       sync.Mutex
	sessions map[string]*browserSession // guarded by mu
}

// Handler serves PagePath and everything under it. auth authenticates
// approvers; the caller puts the listener's Host/Origin checks in front.
func (in *Inbox) Handler(auth Authenticate) http.Handler {
	h := &handler{in: in, auth: auth, sessions: map[string]*browserSession{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PagePath, h.page)
	mux.HandleFunc("GET "+PagePath+"/{id}", h.page)
	mux.HandleFunc("POST "+PagePath+"/login", h.login)
	mux.HandleFunc("POST "+PagePath+"/{id}/{verb}", h.formAnswer)
	mux.HandleFunc("GET "+PagePath+"/static/{file}", h.static)
	mux.HandleFunc("GET "+PagePath+"/events", h.events)
	mux.HandleFunc("GET "+APIPath, h.apiList)
	mux.HandleFunc("GET "+APIPath+"/{id}", h.apiGet)
	mux.HandleFunc("POST "+APIPath+"/{id}/{verb}", h.apiAnswer)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", CSP)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		// same-origin, not no-referrer: with no-referrer the browser sends
		// "Origin: null" on its form posts, which the Origin check refuses.
		w.Header().Set("Referrer-Policy", "same-origin")
		w.Header().Set("Cache-Control", "no-store")
		mux.ServeHTTP(w, r)
	})
}

func bearer(r *http.Request) (string, bool) {
	scheme, t, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(t), true
}

// who authenticates a request: a bearer token (CLI, scripts), the
// browser's session cookie, or — where the listener needs no credential
// — nothing. csrfFree is true when the request cannot have been forged
// by another site's page (a bearer token or the CLI header).
func (h *handler) who(r *http.Request) (who Approver, s *browserSession, csrfFree bool, err error) {
	if tok, ok := bearer(r); ok {
		who, err = h.auth(r.Context(), tok)
		return who, nil, true, err
	}
	if c, err := r.Cookie(sessionCookie); err == nil {
		h.mu.Lock()
		s := h.sessions[c.Value]
		if s != nil && time.Now().After(s.expires) {
			delete(h.sessions, c.Value)
			s = nil
		}
		h.mu.Unlock()
		if s != nil {
			return s.who, s, false, nil
		}
	}
	who, err = h.auth(r.Context(), "")
	return who, nil, err == nil && r.Header.Get(cliHeader) != "", err
}

func (h *handler) newSession(w http.ResponseWriter, r *http.Request, who Approver) *browserSession {
	s := &browserSession{who: who, csrf: rand.Text(), expires: time.Now().Add(sessionLife)}
	id := rand.Text() + rand.Text()
	h.mu.Lock()
	for k, v := range h.sessions {
		if time.Now().After(v.expires) {
			delete(h.sessions, k)
		}
	}
	h.sessions[id] = s
	h.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: PagePath, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: int(sessionLife.Seconds())})
	return s
}

type pageData struct {
	Approver  string
	CSRF      string
	Error     string
	Notice    string
	Off       bool
	Login     bool
	One       bool
	Approvals []Approval
	Now       time.Time
}

func (h *handler) page(w http.ResponseWriter, r *http.Request) {
	who, s, _, err := h.who(r)
	if err != nil {
		h.render(w, http.StatusUnauthorized, pageData{Login: true, Error: loginHint(err)})
		return
	}
	if s == nil {
		s = h.newSession(w, r, who)
	}
	h.render(w, http.StatusOK, h.data(r, s, "", r.URL.Query().Get("notice")))
}

func loginHint(err error) string {
	return "Sign in with the token toolgate serve accepts (its bearer token, or an OAuth access token): " + err.Error()
}

func (h *handler) data(r *http.Request, s *browserSession, errText, notice string) pageData {
	d := pageData{Approver: s.who.Name, CSRF: s.csrf, Error: errText, Notice: notice, Off: !h.in.Enabled(), Now: time.Now()}
	if id := r.PathValue("id"); id != "" && r.Method == http.MethodGet {
		d.One = true
		if a, ok := h.in.Get(id); ok {
			d.Approvals = []Approval{a}
		} else if errText == "" {
			d.Error = fmt.Sprintf("Approval %s is not held by this toolgate serve: approvals live in the replica that holds the call.", id)
		}
		return d
	}
	d.Approvals = h.in.List()
	return d
}

func (h *handler) render(w http.ResponseWriter, status int, d pageData) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	name := "page.html"
	if err := page.ExecuteTemplate(w, name, d); err != nil {
		h.in.log.Warn("rendering the approvals page failed", "error", err)
	}
}

func (h *handler) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	tok := strings.TrimSpace(r.PostFormValue("token"))
	who, err := h.auth(r.Context(), tok)
	if err != nil {
		h.render(w, http.StatusUnauthorized, pageData{Login: true, Error: loginHint(err)})
		return
	}
	h.newSession(w, r, who)
	http.Redirect(w, r, PagePath, http.StatusSeeOther)
}

func (h *handler) formAnswer(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	who, s, csrfFree, err := h.who(r)
	if err != nil || s == nil {
		h.render(w, http.StatusUnauthorized, pageData{Login: true, Error: "Sign in again: your approver session ended."})
		return
	}
	if !csrfFree && subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(s.csrf)) != 1 {
		h.render(w, http.StatusForbidden, h.data(r, s, "The form's CSRF token does not match your session; reload the page and answer again.", ""))
		return
	}
	id := r.PathValue("id")
	a, err := h.answer(id, r.PathValue("verb"), who, r.PostFormValue("scope"), r.PostFormValue("reason"))
	if err != nil {
		h.render(w, statusOf(err), h.data(r, s, err.Error(), ""))
		return
	}
	http.Redirect(w, r, PagePath+"?notice="+fmt.Sprintf("%s+%s", a.ID, a.Status), http.StatusSeeOther)
}

func (h *handler) answer(id, verb string, who Approver, scope, reason string) (Approval, error) {
	switch verb {
	case "approve":
		return h.in.Answer(id, who, true, scope, "")
	case "deny":
		return h.in.Answer(id, who, false, "", reason)
	}
	return Approval{}, fmt.Errorf("%w: unknown answer %q; use approve or deny", errBadRequest, verb)
}

var errBadRequest = errors.New("bad request")

func statusOf(err error) int {
	switch {
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ErrNotApprover), errors.Is(err, ErrOwnCall):
		return http.StatusForbidden
	case errors.Is(err, ErrAnswered):
		return http.StatusConflict
	case errors.Is(err, errBadRequest):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

func (h *handler) static(w http.ResponseWriter, r *http.Request) {
	file := r.PathValue("file")
	types := map[string]string{"app.js": "text/javascript; charset=utf-8", "style.css": "text/css; charset=utf-8"}
	ct, ok := types[file]
	if !ok {
		http.NotFound(w, r)
		return
	}
	b, err := ui.ReadFile("ui/" + file)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "max-age=300")
	_, _ = w.Write(b)
}

// events streams a "change" event at each change of the inbox (and a
// comment every 25s, so that proxies keep the stream open).
func (h *handler) events(w http.ResponseWriter, r *http.Request) {
	if _, _, _, err := h.who(r); err != nil {
		httpError(w, http.StatusUnauthorized, err)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported here", http.StatusInternalServerError)
		return
	}
	ch, cancel := h.in.subscribe()
	defer cancel()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, "retry: 2000\n\n")
	fl.Flush()
	keep := time.NewTicker(25 * time.Second)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case _, open := <-ch:
			if !open {
				return
			}
			if _, err := io.WriteString(w, "event: change\ndata: {}\n\n"); err != nil {
				return
			}
		case <-keep.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
		}
		fl.Flush()
	}
}

func httpError(w http.ResponseWriter, status int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (h *handler) apiList(w http.ResponseWriter, r *http.Request) {
	if _, _, _, err := h.who(r); err != nil {
		httpError(w, http.StatusUnauthorized, err)
		return
	}
	list := h.in.List()
	if list == nil {
		list = []Approval{}
	}
	writeJSON(w, map[string]any{"approvals": list, "enabled": h.in.Enabled()})
}

func (h *handler) apiGet(w http.ResponseWriter, r *http.Request) {
	if _, _, _, err := h.who(r); err != nil {
		httpError(w, http.StatusUnauthorized, err)
		return
	}
	a, ok := h.in.Get(r.PathValue("id"))
	if !ok {
		httpError(w, http.StatusNotFound, fmt.Errorf("%w: %s is not held by this toolgate serve (approvals live in the replica that holds the call)", ErrNotFound, r.PathValue("id")))
		return
	}
	writeJSON(w, a)
}

// AnswerRequest is the body of POST .../approve and .../deny.
type AnswerRequest struct {
	Scope  string `json:"scope,omitempty"`
	Reason string `json:"reason,omitempty"`
}

func (h *handler) apiAnswer(w http.ResponseWriter, r *http.Request) {
	who, s, csrfFree, err := h.who(r)
	if err != nil {
		httpError(w, http.StatusUnauthorized, err)
		return
	}
	if !csrfFree && (s == nil || subtle.ConstantTimeCompare([]byte(r.Header.Get("X-CSRF-Token")), []byte(s.csrf)) != 1) {
		httpError(w, http.StatusForbidden, errors.New("send the page's CSRF token as X-CSRF-Token, or authenticate with a bearer token"))
		return
	}
	var req AnswerRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil && !errors.Is(err, io.EOF) {
		httpError(w, http.StatusBadRequest, fmt.Errorf("the body must be JSON like {\"scope\":\"once\"} or {\"reason\":\"…\"}: %w", err))
		return
	}
	a, err := h.answer(r.PathValue("id"), r.PathValue("verb"), who, req.Scope, req.Reason)
	if err != nil {
		httpError(w, statusOf(err), err)
		return
	}
	writeJSON(w, a)
}
