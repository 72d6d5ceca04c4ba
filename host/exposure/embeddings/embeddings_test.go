package embeddings

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serve answers every request with handler's body and status.
func serve(t *testing.T, status int, body string) *Client {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		_, _ = w.Write([]byte(strings.ReplaceAll(body, "$AUTH", r.Header.Get("Authorization"))))
	}))
	t.Cleanup(srv.Close)
	return New(Config{URL: srv.URL + "/v1/embeddings", Model: "m", APIKey: "sk-secret-key", HTTPClient: srv.Client()})
}

func TestEmbedRejectsBadAnswersClearly(t *testing.T) {
	tests := []struct {
		name, body, want string
		status           int
	}{
		{"error status", `{"error":"bad key $AUTH"}`, "answered 401 Unauthorized", http.StatusUnauthorized},
		{"not JSON", `<html>`, "not an embeddings response", http.StatusOK},
		{"too few vectors", `{"data":[{"index":0,"embedding":[1,0]}]}`, "asked for 2 vectors, got 1", http.StatusOK},
		{"repeated index", `{"data":[{"index":0,"embedding":[1,0]},{"index":0,"embedding":[0,1]}]}`, "out of range or repeated", http.StatusOK},
		{"empty vector", `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[0,1]}]}`, "empty vector", http.StatusOK},
		{"different lengths", `{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[0,1]}]}`, "different lengths", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := serve(t, tt.status, tt.body).Embed(t.Context(), []string{"a", "b"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Embed = %v, want an error containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "sk-secret-key") {
				t.Errorf("the API key is in the error: %v", err)
			}
		})
	}
}

func TestEmbedBatchesAndKeepsOrder(t *testing.T) {
	var batches []int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req request
		_ = json.NewDecoder(r.Body).Decode(&req)
		batches = append(batches, len(req.Input))
		var resp response
		// Answer in reverse order: the index, not the position, places
		// a vector.
		for i := len(req.Input) - 1; i >= 0; i-- {
			var n float32
			_, _ = fmt.Sscan(req.Input[i], &n)
			resp.Data = append(resp.Data, struct {
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			}{i, []float32{n, 1000}})
		}
		_ = json.NewEncoder(w).Encode(resp)
	}))
	defer srv.Close()
	c := New(Config{URL: srv.URL + "/v1/", Model: "m", HTTPClient: srv.Client()})
	var texts []string
	for i := range maxBatch + 3 {
		texts = append(texts, strconv.Itoa(i))
	}
	vecs, err := c.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(batches) != 2 || batches[0] != maxBatch || batches[1] != 3 {
		t.Errorf("batches = %v, want %d then 3", batches, maxBatch)
	}
	// Vectors are unit length; the first component grows with i.
	for i := 1; i < len(vecs); i++ {
		if vecs[i][0] <= vecs[i-1][0] {
			t.Fatalf("vector %d is out of order", i)
		}
	}
}
