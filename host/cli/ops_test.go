package cli_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/host/cli"
	"github.com/toolgate/toolgate/internal/testbin"
)

// TestServeMetricsAndProbes runs `toolgate serve --http --metrics` as an
// operator would: the probes and /metrics answer on their own listener,
// and a cancelled context (what SIGTERM does) stops it cleanly.
func TestServeMetricsAndProbes(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "toolgate.hcl")
	src := `server "one" {
  command  = "` + testbin.Path(t, "mcp-demo") + `"
  required = true
}
serve {
  drain_grace = "5s"
}
`
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	stderr := &lineWriter{lines: make(chan string, 256)}
	done := make(chan int, 1)
	go func() {
		done <- cli.Run(ctx, []string{"serve", "--http", "127.0.0.1:0", "--metrics", "127.0.0.1:0", "--config", cfg},
			cli.IO{In: strings.NewReader(""), Out: io.Discard, Err: stderr, LookupEnv: noUserConfig})
	}()
	// serve answers before its servers are ready: the probes are read
	// once it serves and the required server is ready, in either order.
	metricsURL, serving, ready := "", false, false
	re := regexp.MustCompile(`metrics at (http://\S+)/metrics`)
	deadline := time.After(time.Minute)
	for metricsURL == "" || !serving || !ready {
		select {
		case l := <-stderr.lines:
			if m := re.FindStringSubmatch(l); m != nil {
				metricsURL = m[1]
			}
			serving = serving || strings.Contains(l, "Streamable HTTP")
			ready = ready || strings.Contains(l, "✓ one ready")
		case <-deadline:
			stderr.mu.Lock()
			defer stderr.mu.Unlock()
			t.Fatalf("no metrics address, serving line or ready server printed:\n%s", stderr.buf.String())
		}
	}

	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(metricsURL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if code, body := get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz = %d %q", code, body)
	}
	if _, body := get("/metrics"); !strings.Contains(body, `toolgate_server_up{server="one"} 1`) || !strings.Contains(body, "toolgate_sessions 0") {
		t.Errorf("/metrics lacks the server and session gauges:\n%s", body)
	}

	stop()
	if code := <-done; code != cli.ExitOK {
		t.Errorf("exit code %d after the context ended:\n%s", code, stderr.buf.String())
	}
	if !strings.Contains(stderr.buf.String(), "toolgate: stopped") {
		t.Errorf("stderr lacks the stop message:\n%s", stderr.buf.String())
	}
}
