package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/internal/backoff"
	"github.com/toolgate/toolgate/sdk/guardian"
)

// Defaults, from the Codex Guardian.
const (
	DefaultBudget      = 90 * time.Second
	DefaultMaxAttempts = 3
	// DefaultBackoff is the wait before the second attempt; it doubles for
	// each further attempt, up to MaxBackoff, less up to 20% jitter.
	DefaultBackoff = 500 * time.Millisecond
	// MaxBackoff caps the wait between attempts (unless Retry-After asks
	// for more): with MaxAttempts raised, the budget, not an ever-doubling
	// wait, should end a review.
	MaxBackoff = 10 * time.Second
)

// maxResponse bounds the endpoint's answer that is read.
const maxResponse = 4 << 20

// ErrMalformed means the model did not answer with the verdict object the
// prompt asks for. Callers deny the call.
var ErrMalformed = errors.New("the reviewer model's answer is not the JSON verdict asked for")

// Config configures the engine.
type Config struct {
	// Endpoint is the chat-completions URL, or a base URL such as
	// "http://localhost:11434/v1" to which "/chat/completions" is added.
	Endpoint string
	// Model names the model.
	Model string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// Budget bounds one review, all attempts included; zero means
	// [DefaultBudget].
	Budget time.Duration
	// MaxAttempts bounds the attempts; zero means [DefaultMaxAttempts].
	MaxAttempts int
	// Instructions are appended to the system prompt: the user's policy.
	Instructions string
}

// Options holds what is not configuration: collaborators and test seams.
type Options struct {
	// HTTPClient sends the requests; nil means a client that does not
	// follow redirects to other hosts.
	HTTPClient *http.Client
	// Backoff is the wait before the second attempt; zero means
	// [DefaultBackoff].
	Backoff time.Duration
	// Logger receives one line per attempt (status, duration); nil discards.
	Logger hclog.Logger
}

// Engine reviews actions with a model. Create it with [New].
type Engine struct {
	cfg    Config
	url    string
	client *http.Client
	wait   time.Duration
	logger hclog.Logger
}

// New returns an engine.
func New(cfg Config, opts Options) *Engine {
	if cfg.Budget <= 0 {
		cfg.Budget = DefaultBudget
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	e := &Engine{cfg: cfg, url: CompletionsURL(cfg.Endpoint), client: opts.HTTPClient, wait: opts.Backoff, logger: opts.Logger}
	if e.client == nil {
		e.client = &http.Client{CheckRedirect: sameHostRedirects}
	}
	if e.wait <= 0 {
		e.wait = DefaultBackoff
	}
	if e.logger == nil {
		e.logger = hclog.NewNullLogger()
	}
	return e
}

// CompletionsURL returns the URL requests go to.
func CompletionsURL(endpoint string) string {
	endpoint = strings.TrimRight(endpoint, "/")
	if strings.HasSuffix(endpoint, "/chat/completions") {
		return endpoint
	}
	return endpoint + "/chat/completions"
}

// sameHostRedirects keeps the API key from following a redirect elsewhere.
func sameHostRedirects(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("stopped after 5 redirects")
	}
	if req.URL.Host != via[0].URL.Host {
		return fmt.Errorf("refusing a redirect to another host (%s)", req.URL.Host)
	}
	return nil
}

// Review asks the model about a, retrying retryable failures within the
// budget. See the package documentation for the errors.
func (e *Engine) Review(ctx context.Context, a guardian.Action) (guardian.Verdict, error) {
	body, err := e.requestBody(a)
	if err != nil {
		return guardian.Verdict{}, err
	}
	budgetCtx, cancel := context.WithTimeout(ctx, e.cfg.Budget)
	defer cancel()
	var last error
	for attempt := 1; ; attempt++ {
		content, retryAfter, err := e.attempt(budgetCtx, body)
		if err == nil {
			return parseVerdict(content)
		}
		last = err
		switch {
		case ctx.Err() != nil:
			return guardian.Verdict{}, fmt.Errorf("review action: %w", ctx.Err())
		case budgetCtx.Err() != nil:
			return guardian.Verdict{}, fmt.Errorf("review action: the automatic review did not finish within %s: %w", e.cfg.Budget, context.DeadlineExceeded)
		case !retryable(err):
			return guardian.Verdict{}, fmt.Errorf("review action: %w", err)
		case attempt >= e.cfg.MaxAttempts:
			return guardian.Verdict{}, fmt.Errorf("review action: %d attempts failed, the last with: %w", attempt, last)
		}
		wait := backoff.Policy{Initial: e.wait, Max: MaxBackoff}.Delay(attempt)
		if retryAfter > 0 {
			wait = retryAfter // the server's word, taken as is
		}
		e.logger.Debug("retrying review", "attempt", attempt, "wait", wait, "error", err)
		if backoff.Sleep(budgetCtx, wait) != nil {
			if ctx.Err() != nil {
				return guardian.Verdict{}, fmt.Errorf("review action: %w", ctx.Err())
			}
			return guardian.Verdict{}, fmt.Errorf("review action: the automatic review did not finish within %s (last error: %v): %w", e.cfg.Budget, last, context.DeadlineExceeded)
		}
	}
}

// statusError is an HTTP answer other than 200.
type statusError struct {
	code int
	body string
}

func (e *statusError) Error() string {
	if e.body == "" {
		return fmt.Sprintf("the endpoint answered %d %s", e.code, http.StatusText(e.code))
	}
	return fmt.Sprintf("the endpoint answered %d %s: %s", e.code, http.StatusText(e.code), e.body)
}

// networkError is a failure to get any answer.
type networkError struct{ err error }

func (e *networkError) Error() string { return "reach the endpoint: " + e.err.Error() }
func (e *networkError) Unwrap() error { return e.err }

func retryable(err error) bool {
	var se *statusError
	if errors.As(err, &se) {
		return se.code == http.StatusRequestTimeout || se.code == http.StatusTooManyRequests || se.code >= 500
	}
	var ne *networkError
	return errors.As(err, &ne)
}

// attempt makes one request and returns the assistant message's content.
func (e *Engine) attempt(ctx context.Context, body []byte) (content string, retryAfter time.Duration, err error) {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return "", 0, fmt.Errorf("build request: %s", e.redact(err.Error()))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if e.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.cfg.APIKey)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return "", 0, &networkError{errors.New(e.redact(err.Error()))}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	e.logger.Debug("review request", "status", resp.StatusCode, "duration", time.Since(start))
	if err != nil {
		return "", 0, &networkError{errors.New(e.redact(err.Error()))}
	}
	if resp.StatusCode != http.StatusOK {
		return "", parseRetryAfter(resp.Header.Get("Retry-After")), &statusError{code: resp.StatusCode, body: e.redact(excerpt(raw))}
	}
	var completion struct {
		Choices []struct {
			Message struct {
				Content *string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &completion); err != nil {
		return "", 0, fmt.Errorf("%w: the endpoint's response is not a chat completion (%v)", ErrMalformed, err)
	}
	if len(completion.Choices) == 0 || completion.Choices[0].Message.Content == nil {
		return "", 0, fmt.Errorf("%w: the chat completion has no message content", ErrMalformed)
	}
	return *completion.Choices[0].Message.Content, 0, nil
}

// parseRetryAfter reads a Retry-After header in seconds; dates and bad
// values are ignored.
func parseRetryAfter(v string) time.Duration {
	secs, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || secs <= 0 {
		return 0
	}
	return time.Duration(secs) * time.Second
}

// excerpt shortens an error body for an error text.
func excerpt(raw []byte) string {
	text := strings.Join(strings.Fields(string(raw)), " ")
	const limit = 200
	if len(text) > limit {
		text = text[:limit] + "…"
	}
	return text
}

// redact removes the API key from a text taken from the endpoint or the
// HTTP stack.
func (e *Engine) redact(text string) string {
	if e.cfg.APIKey == "" {
		return text
	}
	return strings.ReplaceAll(text, e.cfg.APIKey, "[redacted]")
}
