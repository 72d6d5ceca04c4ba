package inbox_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/inbox"
)

// TestFormsNeedTheSessionsCSRFToken: a browser session's answer counts
// only with the CSRF token of its page, so another site's page cannot
// answer through the approver's cookie; the CLI header or a bearer token
// is needed instead of it.
func TestFormsNeedTheSessionsCSRFToken(t *testing.T) {
	in, _ := newInbox(t, &config.Inbox{Mode: config.InboxRetry, Timeout: time.Minute, Expiry: time.Hour}, inbox.Options{})
	srv := httptest.NewServer(in.Handler(func(context.Context, string) (inbox.Approver, error) {
		return inbox.Approver{Name: "local user"}, nil
	}))
	defer srv.Close()
	_, _ = in.Ask(t.Context(), prompt(`{"path":"a"}`, alice), nil)
	id := pendingID(t, in)

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := browser.Get(srv.URL + "/approvals")
	if err != nil {
		t.Fatal(err)
	}
	var page strings.Builder
	buf := make([]byte, 64<<10)
	for {
		n, err := resp.Body.Read(buf)
		page.Write(buf[:n])
		if err != nil {
			break
		}
	}
	resp.Body.Close()
	if resp.Header.Get("Content-Security-Policy") != inbox.CSP {
		t.Errorf("CSP: %q", resp.Header.Get("Content-Security-Policy"))
	}
	if regexp.MustCompile(`<script>|<script [^s]|style=|on(click|load|submit)=`).MatchString(page.String()) {
		t.Error("the page has inline script or style")
	}
	csrf := regexp.MustCompile(`name="csrf" value="([A-Z0-9]+)"`).FindStringSubmatch(page.String())
	if csrf == nil {
		t.Fatalf("no CSRF token in the page:\n%s", page.String())
	}
	post := func(form url.Values) int {
		resp, err := browser.PostForm(srv.URL+"/approvals/"+id+"/approve", form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(url.Values{"scope": {"once"}}); code != http.StatusForbidden {
		t.Errorf("a form without the CSRF token: %d", code)
	}
	if code := post(url.Values{"scope": {"once"}, "csrf": {"WRONG"}}); code != http.StatusForbidden {
		t.Errorf("a form with another token: %d", code)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+inbox.APIPath+"/"+id+"/approve", strings.NewReader(`{}`))
	resp, err = browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("an API answer with the cookie only: %d", resp.StatusCode)
	}
	if a, _ := in.Get(id); a.Status != inbox.StatusPending {
		t.Fatalf("a forged answer counted: %s", a.Status)
	}
	if code := post(url.Values{"scope": {"once"}, "csrf": {csrf[1]}}); code != http.StatusSeeOther {
		t.Errorf("the page's own form: %d", code)
	}
	if a, _ := in.Get(id); a.Status != inbox.StatusApproved || a.Answer.Approver != "local user" {
		t.Errorf("after the page's form: %+v", a)
	}
}
