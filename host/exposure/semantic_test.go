package exposure

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/exposure/embeddings"
	"github.com/toolgate/toolgate/host/pipeline"
)

// fakeEmbeddings is an OpenAI-compatible /v1/embeddings endpoint whose
// vectors count a few concepts, so that words a tool never uses can be
// close to it ("rain" is about the weather).
type fakeEmbeddings struct {
	mu     sync.Mutex
	inputs []string // every text it was asked to embed
	auth   []string
	status int // answer with this status when not 0
	srv    *httptest.Server
}

var fakeConcepts = map[string]int{
	"weather": 1, "rain": 1, "umbrella": 1, "forecast": 1,
	"picture": 2, "screenshot": 2, "snapshot": 2,
	"file": 3, "write": 3, "save": 3,
	"directory": 4, "list": 4, "entries": 4, "folder": 4,
}

func newFakeEmbeddings(t *testing.T) *fakeEmbeddings {
	f := &fakeEmbeddings{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "fake-model" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.inputs = append(f.inputs, req.Input...)
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		status := f.status
		f.mu.Unlock()
		if status != 0 {
			// A broken endpoint that echoes the request's credentials.
			http.Error(w, "upstream exploded for "+r.Header.Get("Authorization"), status)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var resp struct {
			Data []item `json:"data"`
		}
		for i, text := range req.Input {
			v := make([]float32, 5)
			v[0] = 0.1 // no zero vectors
			for _, w := range strings.Fields(strings.ToLower(strings.NewReplacer(".", " ", ",", " ", "_", " ").Replace(text))) {
				if c, ok := fakeConcepts[w]; ok {
					v[c]++
				}
			}
			resp.Data = append(resp.Data, item{i, v})
		}
		_ = json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeEmbeddings) client(key string) *embeddings.Client {
	return embeddings.New(embeddings.Config{URL: f.srv.URL + "/v1", Model: "fake-model", APIKey: key, HTTPClient: f.srv.Client()})
}

func (f *fakeEmbeddings) asked() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.inputs...)
}

func semanticStep(cats *fakeSnapshots, ix *Indexes, client *embeddings.Client, log hclog.Logger, now func() time.Time) *Step {
	return NewStep(Options{Snapshots: cats, Pipeline: pipeline.New(pipeline.Options{Approver: approveAll{}, Executor: &recordingExecutor{}}), Indexes: ix,
		Policy: Policy{Mode: config.ExposureDeferred}, Embeddings: client, Logger: log, Now: now})
}

func TestToolSearchFusesTheSemanticRanking(t *testing.T) {
	fake := newFakeEmbeddings(t)
	cats := &fakeSnapshots{cat: catalogOf(1, demoServers)}
	ix := &Indexes{}
	s := semanticStep(cats, ix, fake.client("sk-test"), nil, nil)

	// No tool says "rain" or "umbrella": BM25 alone cannot find the
	// weather tool, the vectors can.
	const query = "do I need an umbrella, will it rain"
	bm25, _ := newTestStep(t, cats, Policy{Mode: config.ExposureDeferred}, nil)
	if found, _ := bm25.Search(t.Context(), query, 3); len(found) > 0 && found[0].ModelName == "mcp__web__get_weather" {
		t.Fatalf("BM25 alone already finds the weather tool (%v): the query tests nothing", names(found))
	}
	found, err := s.Search(t.Context(), query, 3)
	if err != nil || len(found) == 0 || found[0].ModelName != "mcp__web__get_weather" {
		t.Fatalf("with embeddings Search(%q) = %v, %v; want mcp__web__get_weather first", query, names(found), err)
	}
	// A name still ranks first whatever the vectors say.
	if found, _ := s.Search(t.Context(), "list_dir", 3); len(found) == 0 || found[0].ModelName != "mcp__files__list_dir" {
		t.Errorf("Search(list_dir) = %v, want mcp__files__list_dir first", names(found))
	}
	fake.mu.Lock()
	auth := fake.auth[0]
	fake.mu.Unlock()
	if auth != "Bearer sk-test" {
		t.Errorf("Authorization = %q, want the API key as a bearer token", auth)
	}

	// Each tool definition is embedded once: later searches, from other
	// steps too, embed only their query.
	tools := len(catalogOf(1, demoServers).Tools)
	if got := len(fake.asked()); got != tools+2 {
		t.Fatalf("embedded %d texts for %d tools and 2 queries", got, tools)
	}
	s3 := semanticStep(cats, ix, s.opts.Embeddings, nil, nil)
	if _, err := s3.Search(t.Context(), "weather", 3); err != nil {
		t.Fatal(err)
	}
	if got := len(fake.asked()); got != tools+3 {
		t.Errorf("a second step re-embedded the tools: %d texts", got)
	}
	// A new catalog revision re-embeds only the definition that changed.
	changed := map[string]map[string]string{"files": maps(demoServers["files"]), "web": maps(demoServers["web"])}
	changed["web"]["get_weather"] = "Weather forecast for a city, hour by hour."
	cats.mu.Lock()
	cats.cat = catalogOf(2, changed)
	cats.mu.Unlock()
	before := len(fake.asked())
	s4 := semanticStep(cats, ix, s.opts.Embeddings, nil, nil)
	if _, err := s4.Search(t.Context(), "weather", 3); err != nil {
		t.Fatal(err)
	}
	if got := fake.asked()[before:]; len(got) != 2 || !strings.Contains(got[0], "hour by hour") {
		t.Errorf("after one definition changed, embedded %q; want that definition and the query", got)
	}
}

func maps(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestToolSearchFallsBackToBM25WhenTheEndpointFails(t *testing.T) {
	fake := newFakeEmbeddings(t)
	fake.status = http.StatusInternalServerError
	cats := &fakeSnapshots{cat: catalogOf(1, demoServers)}
	var logs bytes.Buffer
	var mu sync.Mutex
	log := hclog.New(&hclog.LoggerOptions{Output: &syncWriter{mu: &mu, w: &logs}, Level: hclog.Warn})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := semanticStep(cats, &Indexes{}, fake.client("sk-secret-1234"), log, clock)
	bm25, _ := newTestStep(t, cats, Policy{Mode: config.ExposureDeferred}, nil)

	for _, q := range []string{"take a picture of a website", "write a file"} {
		want, _ := bm25.Search(t.Context(), q, 4)
		got, err := s.Search(t.Context(), q, 4)
		if err != nil || strings.Join(names(got), " ") != strings.Join(names(want), " ") {
			t.Errorf("Search(%q) with a failing endpoint = %v, %v; want BM25's %v", q, names(got), err, names(want))
		}
	}
	mu.Lock()
	text := logs.String()
	mu.Unlock()
	if strings.Count(text, "semantic ranking failed") != 1 || !strings.Contains(text, "500") {
		t.Errorf("want one warning naming the failure, got:\n%s", text)
	}
	if strings.Contains(text, "sk-secret-1234") {
		t.Errorf("the API key reached the log:\n%s", text)
	}
	// The failed endpoint was left alone for the second query, and is
	// tried again once semanticRetry has passed.
	if n := len(fake.asked()); n != len(catalogOf(1, demoServers).Tools) {
		t.Errorf("the endpoint was asked %d texts; want one attempt at the tools only", n)
	}
	mu.Lock()
	now = now.Add(semanticRetry + time.Second)
	mu.Unlock()
	fake.mu.Lock()
	fake.status = 0
	fake.mu.Unlock()
	if found, _ := s.Search(t.Context(), "do I need an umbrella, will it rain", 3); len(found) == 0 || found[0].ModelName != "mcp__web__get_weather" {
		t.Errorf("after the pause the endpoint is used again: got %v", names(found))
	}
}

type syncWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
