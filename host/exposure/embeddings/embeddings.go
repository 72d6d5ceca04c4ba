package embeddings

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/toolgate/toolgate/internal/safetext"
)

// Config says where the endpoint is.
type Config struct {
	// URL is the endpoint's base URL ("http://localhost:11434/v1") or the
	// embeddings endpoint itself (".../v1/embeddings").
	URL   string
	Model string
	// APIKey is sent as a bearer token when not empty.
	APIKey string
	// HTTPClient defaults to http.DefaultClient.
	HTTPClient *http.Client
}

// maxBatch is the most texts sent in one request; endpoints cap it
// (OpenAI at 2048 inputs), smaller batches keep each request short.
const maxBatch = 256

// maxErrorBody is how much of an error response is quoted.
const maxErrorBody = 200

// Client embeds texts and caches the vectors of tool definitions. It is
// safe for concurrent use.
type Client struct {
	cfg      Config
	endpoint string

	mu    sync.Mutex
	cache map[[32]byte][]float32 // definition text → vector
}

// New returns a client of the endpoint cfg names.
func New(cfg Config) *Client {
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = http.DefaultClient
	}
	endpoint := strings.TrimRight(cfg.URL, "/")
	if !strings.HasSuffix(endpoint, "/embeddings") {
		endpoint += "/embeddings"
	}
	return &Client{cfg: cfg, endpoint: endpoint, cache: map[[32]byte][]float32{}}
}

type request struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type response struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// Embed returns one vector per text, in order.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += maxBatch {
		vecs, err := c.embedBatch(ctx, texts[start:min(start+maxBatch, len(texts))])
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

func (c *Client) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(request{Model: c.cfg.Model, Input: texts})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embeddings endpoint: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("embeddings endpoint: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("embeddings endpoint: reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		quoted := string(data[:min(len(data), maxErrorBody)])
		if c.cfg.APIKey != "" {
			quoted = strings.ReplaceAll(quoted, c.cfg.APIKey, "[REDACTED]")
		}
		return nil, fmt.Errorf("embeddings endpoint answered %s: %s", resp.Status, safetext.Line(quoted))
	}
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("embeddings endpoint: the answer is not an embeddings response: %w", err)
	}
	if len(r.Data) != len(texts) {
		return nil, fmt.Errorf("embeddings endpoint: asked for %d vectors, got %d", len(texts), len(r.Data))
	}
	out := make([][]float32, len(texts))
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= len(texts) || out[d.Index] != nil {
			return nil, fmt.Errorf("embeddings endpoint: vector index %d is out of range or repeated", d.Index)
		}
		if len(d.Embedding) == 0 {
			return nil, errors.New("embeddings endpoint: an empty vector")
		}
		out[d.Index] = normalize(d.Embedding)
	}
	dim := len(out[0])
	for _, v := range out {
		if len(v) != dim {
			return nil, errors.New("embeddings endpoint: vectors are empty or of different lengths")
		}
	}
	return out, nil
}

// normalize scales v to unit length, so a dot product is the cosine.
func normalize(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(sum))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}

// Index holds the vectors of a set of tool definitions.
type Index struct {
	ids  []string
	vecs [][]float32
}

// Doc is one tool definition: its ID and the text that is embedded.
type Doc struct {
	ID   string
	Text string
}

// Build embeds docs, asking the endpoint only for definitions it has not
// embedded before, and forgets cached definitions that are not in docs
// (so the cache follows the catalog instead of growing with every
// revision).
func (c *Client) Build(ctx context.Context, docs []Doc) (*Index, error) {
	keys := make([][32]byte, len(docs))
	ix := &Index{ids: make([]string, len(docs)), vecs: make([][]float32, len(docs))}
	var missing []string
	var missingAt []int
	c.mu.Lock()
	for i, d := range docs {
		keys[i] = sha256.Sum256([]byte(c.cfg.Model + "\x00" + d.Text))
		ix.ids[i] = d.ID
		if v, ok := c.cache[keys[i]]; ok {
			ix.vecs[i] = v
		} else {
			missing = append(missing, d.Text)
			missingAt = append(missingAt, i)
		}
	}
	c.mu.Unlock()
	if len(missing) > 0 {
		vecs, err := c.Embed(ctx, missing)
		if err != nil {
			return nil, err
		}
		for j, i := range missingAt {
			ix.vecs[i] = vecs[j]
		}
	}
	if dim := vectorsDim(ix.vecs); dim < 0 {
		return nil, errors.New("embeddings endpoint: vectors of different lengths across requests (was the model changed?)")
	}
	c.mu.Lock()
	c.cache = make(map[[32]byte][]float32, len(docs))
	for i := range docs {
		c.cache[keys[i]] = ix.vecs[i]
	}
	c.mu.Unlock()
	return ix, nil
}

func vectorsDim(vecs [][]float32) int {
	if len(vecs) == 0 {
		return 0
	}
	for _, v := range vecs {
		if len(v) != len(vecs[0]) {
			return -1
		}
	}
	return len(vecs[0])
}

// Hit is one tool ranked by similarity.
type Hit struct {
	ID    string
	Score float64
}

// Rank returns the limit tools most similar to the query vector q, best
// first; ties break by ID.
func (ix *Index) Rank(q []float32, limit int) ([]Hit, error) {
	if len(ix.vecs) > 0 && len(q) != len(ix.vecs[0]) {
		return nil, fmt.Errorf("embeddings endpoint: the query vector has %d dimensions, the tools' %d", len(q), len(ix.vecs[0]))
	}
	hits := make([]Hit, len(ix.ids))
	for i, v := range ix.vecs {
		var dot float64
		for j, x := range v {
			dot += float64(x) * float64(q[j])
		}
		hits[i] = Hit{ix.ids[i], dot}
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	return hits[:min(limit, len(hits))], nil
}
