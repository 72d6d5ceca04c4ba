package inbox_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/toolgate/toolgate/host/inbox"
	"github.com/toolgate/toolgate/host/tokenauth/tokenauthtest"
	"github.com/toolgate/toolgate/internal/testbin"
)

// chromePath finds the Chromium or Chrome the browser test drives:
// $TOOLGATE_CHROME, else the usual names (make test installs Debian's
// chromium where it is missing).
func chromePath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TOOLGATE_CHROME"); p != "" {
		return p
	}
	names := []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"}
	if runtime.GOOS == "darwin" {
		names = append(names, "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome")
	}
	if runtime.GOOS == "windows" {
		names = append(names, `C:\Program Files\Google\Chrome\Application\chrome.exe`)
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Fatal("the approvals browser test needs Chromium or Chrome: run make test (it installs Debian's chromium as root), " +
		"install it (apt-get install chromium), or set TOOLGATE_CHROME to the browser's executable")
	return ""
}

// artifactDir is where tests keep what a person may want to look at:
// $TOOLGATE_ARTIFACTS (make test sets bin/artifacts), else a directory
// under the system's temporary directory.
func artifactDir(t *testing.T) string {
	dir := os.Getenv("TOOLGATE_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "toolgate-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestBrowserInbox is a team lead answering an unattended agent's calls
// in a real browser (headless Chromium) against a real toolgate serve
// with OAuth callers, mcp-demo, and a go-sdk client without elicitation:
// the call is held; the page shows it with its arguments; approving
// one's own call is refused (separate_approver); a call held while the
// page is open appears without a reload; Approve returns the real result
// to the client; a second approve of the same id is refused; Deny
// returns the reason. The page's screenshot is kept as an artifact.
func TestBrowserInbox(t *testing.T) {
	chrome := chromePath(t)
	iss := tokenauthtest.New(t)
	const resource = "https://toolgate.test/mcp"
	aliceTok := iss.Token(t, "k1", tokenauthtest.Claims{Subject: "alice", Audience: []string{resource}, Extra: map[string]any{"groups": []string{"dev"}}})
	bobTok := iss.Token(t, "k1", tokenauthtest.Claims{Subject: "bob", Audience: []string{resource}, Extra: map[string]any{"groups": []string{"ops"}}})

	root := t.TempDir()
	for _, f := range []string{"old-report.txt", "customers.db"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("data"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := startServe(t, `
serve {
  auth {
    issuer   = "`+iss.URL+`"
    resource = "`+resource+`"
  }
}
approval {
  inbox {
    mode              = "hold"
    timeout           = "5m"
    approvers         = ["group:ops", "sub:alice"]
    separate_approver = true
  }
}
server "demo" {
  command = "`+testbin.Path(t, "mcp-demo")+`"
  args    = ["--root", "`+root+`"]
}
`)
	ag := connect(t, s.base, aliceTok)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	// The page's headers and markup: a strict CSP, no inline script.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/approvals", nil)
	req.Header.Set("Authorization", "Bearer "+bobTok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Security-Policy") != inbox.CSP || !strings.Contains(inbox.CSP, "script-src 'self'") {
		t.Fatalf("page: %s, CSP %q", resp.Status, resp.Header.Get("Content-Security-Policy"))
	}

	call1 := ag.call(ctx, "mcp__demo__delete_file", map[string]any{"path": "old-report.txt"})
	id1 := ag.heldID(t, s.base)

	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chrome),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1100, 1000),
	)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()

	login := func(token string) {
		t.Helper()
		if err := chromedp.Do(browser,
			chromedp.Navigate(s.base+"/approvals"),
			chromedp.WaitVisible(chromedp.ID("token")),
			chromedp.SendKeys(chromedp.ID("token"), token),
		); err != nil {
			t.Fatalf("login page: %v", err)
		}
		if _, err := chromedp.RunResponse(browser, chromedp.Click(chromedp.ID("signin"))); err != nil {
			t.Fatalf("sign in: %v", err)
		}
	}
	text := func(sel chromedp.CSS) string {
		t.Helper()
		s, err := chromedp.Run(browser, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}

	// Alice may approve, but not her own call.
	login(aliceTok)
	if err := chromedp.Do(browser, chromedp.WaitVisible(chromedp.ID(id1))); err != nil {
		t.Fatalf("the held call is not on the page: %v", err)
	}
	if args := text(chromedp.CSS("#" + id1 + " pre.args")); !strings.Contains(args, `"path": "old-report.txt"`) {
		t.Errorf("the page shows the arguments as %q", args)
	}
	if who := text(chromedp.CSS("#" + id1 + " dl")); !strings.Contains(who, "alice") || !strings.Contains(who, "destructive: yes") {
		t.Errorf("the page does not show the caller and annotations: %q", who)
	}
	if _, err := chromedp.RunResponse(browser, chromedp.Click(chromedp.CSS("#"+id1+" button.approve"))); err != nil {
		t.Fatalf("alice's approve: %v", err)
	}
	if msg := text(chromedp.CSS("#error")); !strings.Contains(msg, "separate_approver") {
		t.Errorf("approving one's own call: %q", msg)
	}

	// Bob signs in; a second call held while the page is open appears
	// through the live updates, without a reload.
	if _, err := chromedp.Call(browser, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	login(bobTok)
	if err := chromedp.Do(browser, chromedp.WaitVisible(chromedp.ID(id1))); err != nil {
		t.Fatal(err)
	}
	call2 := ag.call(ctx, "mcp__demo__delete_file", map[string]any{"path": "customers.db"})
	id2 := ag.heldID(t, s.base, id1)
	if err := chromedp.Do(browser, chromedp.WaitVisible(chromedp.ID(id2))); err != nil {
		t.Fatalf("the second held call did not appear live: %v", err)
	}
	shot, err := chromedp.Run(browser, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	png := filepath.Join(artifactDir(t), "approvals-inbox.png")
	if err := os.WriteFile(png, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the approvals inbox: %s", png)

	// Approve: the client gets the server's real result.
	if _, err := chromedp.RunResponse(browser, chromedp.Click(chromedp.CSS("#"+id1+" button.approve"))); err != nil {
		t.Fatal(err)
	}
	r1 := wait(t, call1)
	if r1.isError || !strings.Contains(r1.text, "old-report.txt") {
		t.Fatalf("the approved call: %+v", r1)
	}
	if _, err := os.Stat(filepath.Join(root, "old-report.txt")); !os.IsNotExist(err) {
		t.Errorf("old-report.txt still exists after the approved delete: %v", err)
	}
	// A second approve of the same id is refused.
	if code, body := api(t, http.MethodPost, s.base+inbox.APIPath+"/"+id1+"/approve", bobTok, `{}`); code != http.StatusConflict || !strings.Contains(body, "already") {
		t.Errorf("second approve: %d %s", code, body)
	}

	// Deny with a reason, on the page Bob has open: the client gets it.
	if err := chromedp.Do(browser, chromedp.WaitVisible(chromedp.CSS("article.used#"+id1))); err != nil {
		t.Fatalf("the approved call is not shown as used: %v", err)
	}
	tab := browser
	denyCtx, cancelDeny := context.WithTimeout(tab, time.Minute) // a hang fails here, not at the test timeout
	defer cancelDeny()
	if err := chromedp.Do(denyCtx,
		chromedp.WaitVisible(chromedp.CSS("#"+id2+" input[name=reason]")),
		chromedp.SendKeys(chromedp.CSS("#"+id2+" input[name=reason]"), "customers.db is production data"),
	); err != nil {
		t.Fatalf("typing the reason: %v", err)
	}
	if _, err := chromedp.RunResponse(denyCtx, chromedp.Click(chromedp.CSS("#"+id2+" button.deny"))); err != nil {
		t.Fatalf("clicking Deny: %v", err)
	}
	r2 := wait(t, call2)
	if !r2.isError || !strings.Contains(r2.text, "customers.db is production data") || !strings.Contains(r2.text, "bob") {
		t.Fatalf("the denied call: %+v", r2)
	}
	if _, err := os.Stat(filepath.Join(root, "customers.db")); err != nil {
		t.Errorf("customers.db was deleted although denied: %v", err)
	}
	// The open page shows the answer once its live update arrives.
	statusCtx, cancelStatus := context.WithTimeout(tab, 45*time.Second)
	defer cancelStatus()
	if err := chromedp.Do(statusCtx, chromedp.WaitVisible(chromedp.CSS("article.denied#"+id2))); err != nil {
		t.Errorf("the page does not show %s as denied: %v", id2, err)
	}
	cancelBrowser()
	cancelAlloc()
}
