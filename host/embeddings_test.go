package host_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/host"
)

// The exposure { embeddings } block reaches tool_search: the host sends
// the deferred tools' definitions to the endpoint with the key from the
// named variable, and without that variable it searches with BM25 alone
// and never contacts the endpoint.
func TestEmbeddingsBlockReachesToolSearch(t *testing.T) {
	var mu sync.Mutex
	var auth []string
	inputs := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input []string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		inputs += len(req.Input)
		mu.Unlock()
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var resp struct {
			Data []item `json:"data"`
		}
		for i := range req.Input {
			resp.Data = append(resp.Data, item{i, []float32{1, float32(i)}})
		}
		_ = json.NewEncoder(w).Encode(resp)
	}))
	defer srv.Close()
	top := fmt.Sprintf(`exposure {
  mode = "deferred"
  embeddings {
    url             = %q
    model           = "m"
    api_key_env_var = "TEST_EMBEDDINGS_KEY"
  }
}`, srv.URL+"/v1")

	for _, withKey := range []bool{true, false} {
		mu.Lock()
		auth, inputs = nil, 0
		mu.Unlock()
		env := map[string]string{}
		if withKey {
			env["TEST_EMBEDDINGS_KEY"] = "sk-host-test"
		}
		f := startHost(t, setup{top: top, opts: host.Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}})
		step := f.h.NewStep("")
		deferred := len(step.Deferred())
		found, err := step.Search(t.Context(), "echo", 3)
		if err != nil || len(found) == 0 {
			t.Fatalf("withKey=%v: Search(echo) = %v, %v", withKey, found, err)
		}
		mu.Lock()
		gotAuth, gotInputs := auth, inputs
		mu.Unlock()
		switch {
		case withKey && (gotInputs != deferred+1 || gotAuth[0] != "Bearer sk-host-test"):
			t.Errorf("with the key: the endpoint got %d texts (want %d tools + the query), Authorization %q", gotInputs, deferred, gotAuth)
		case !withKey && len(gotAuth) != 0:
			t.Errorf("without the key variable the endpoint was contacted %d times", len(gotAuth))
		}
	}
}
