package guardian_test

import (
	"os"
	"runtime"
	"testing"

	"github.com/toolgate/toolgate/sdk/guardian"
	"github.com/toolgate/toolgate/sdk/plugintest"
)

// serveFunc serves a Guardian in-process and returns the host's client.
type serveFunc func(t *testing.T, impl guardian.Reviewer) *guardian.Client

// eachTransport runs f once with the Guardian reached over gRPC and,
// where the platform offers it, once over the direct lane, the way the
// host reaches it.
func eachTransport(t *testing.T, f func(t *testing.T, serve serveFunc)) {
	t.Run("grpc", func(t *testing.T) {
		f(t, func(t *testing.T, impl guardian.Reviewer) *guardian.Client { return plugintest.Guardian(t, impl) })
	})
	if runtime.GOOS != "linux" {
		return
	}
	t.Run("lane", func(t *testing.T) {
		f(t, func(t *testing.T, impl guardian.Reviewer) *guardian.Client {
			g := plugintest.Guardian(t, impl)
			if _, err := g.Info(t.Context()); err != nil {
				t.Fatal(err)
			}
			open, err := g.OpenLane(t.Context(), os.Getpid())
			if err != nil || !open {
				t.Fatalf("OpenLane = %v, %v; want the lane open", open, err)
			}
			t.Cleanup(g.CloseLane)
			return g
		})
	})
}
