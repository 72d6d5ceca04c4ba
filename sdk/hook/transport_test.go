package hook_test

import (
	"os"
	"runtime"
	"testing"

	"github.com/toolgate/toolgate/sdk/hook"
	"github.com/toolgate/toolgate/sdk/plugintest"
)

// serveFunc serves a hook in-process and returns the host's client of it.
type serveFunc func(t *testing.T, impl hook.Hook) *hook.Client

// eachTransport runs f once with hooks reached over gRPC and, where the
// platform offers it, once over the direct lane, the way the host reaches
// them: the shim's promises hold on both.
func eachTransport(t *testing.T, f func(t *testing.T, serve serveFunc)) {
	t.Run("grpc", func(t *testing.T) {
		f(t, func(t *testing.T, impl hook.Hook) *hook.Client { return plugintest.Hook(t, impl) })
	})
	if runtime.GOOS != "linux" {
		return
	}
	t.Run("lane", func(t *testing.T) {
		f(t, func(t *testing.T, impl hook.Hook) *hook.Client {
			h := plugintest.Hook(t, impl)
			if _, err := h.Info(t.Context()); err != nil {
				t.Fatal(err)
			}
			open, err := h.OpenLane(t.Context(), os.Getpid())
			if err != nil || !open {
				t.Fatalf("OpenLane = %v, %v; want the lane open", open, err)
			}
			t.Cleanup(h.CloseLane)
			return h
		})
	})
}

// withLane adds the lane capability where the platform offers it.
func withLane(caps []string) []string {
	if runtime.GOOS == "linux" {
		return append(caps, "lane")
	}
	return caps
}
