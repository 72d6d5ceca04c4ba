package wire_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/internal/pb/pluginv1"
	"github.com/toolgate/toolgate/sdk/internal/wire"
)

// roundTrip sends a plugin's error through both translations.
func roundTrip(err error) error {
	return wire.FromRPC(context.Background(), wire.ToStatus(err), nil)
}

func TestErrorsSurviveTheRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		name    string
		err     error
		wantIs  error
		wantMsg string // for *sdk.PluginError
	}{
		{"deadline", fmt.Errorf("calling model: %w", context.DeadlineExceeded), context.DeadlineExceeded, ""},
		{"canceled", context.Canceled, context.Canceled, ""},
		{"not configured", fmt.Errorf("loading rules: %w", sdk.ErrNotConfigured), sdk.ErrNotConfigured, ""},
		{"plain error", errors.New("rules file missing; set rules_file"), nil, "rules file missing; set rules_file"},
		{"foreign gRPC status is not passed on", status.Error(codes.Unavailable, "model API down"), nil,
			"rpc error: code = Unavailable desc = model API down"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := roundTrip(tt.err)
			if tt.wantIs != nil {
				if !errors.Is(got, tt.wantIs) {
					t.Errorf("got %v, want %v", got, tt.wantIs)
				}
				return
			}
			var pe *sdk.PluginError
			if !errors.As(got, &pe) || pe.Msg != tt.wantMsg {
				t.Errorf("got %#v, want *sdk.PluginError{%q}", got, tt.wantMsg)
			}
		})
	}
}

func TestExitedPluginWinsOverAnyStatus(t *testing.T) {
	exited, cancel := context.WithCancel(context.Background())
	cancel()
	for _, code := range []codes.Code{codes.Unavailable, codes.Unknown, codes.Canceled, codes.Internal} {
		if got := wire.FromRPC(context.Background(), status.Error(code, "x"), exited); !errors.Is(got, sdk.ErrPluginExited) {
			t.Errorf("%v after exit: got %v, want sdk.ErrPluginExited", code, got)
		}
	}
}

func TestUnavailableWaitsForTheExit(t *testing.T) {
	t.Run("exit noticed within the wait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			exited, markExited := context.WithCancel(context.Background())
			time.AfterFunc(wire.ExitWait/2, markExited)
			got := wire.FromRPC(context.Background(), status.Error(codes.Unavailable, "error reading from server: EOF"), exited)
			if !errors.Is(got, sdk.ErrPluginExited) {
				t.Errorf("got %v, want sdk.ErrPluginExited", got)
			}
		})
	})
	t.Run("no exit", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			got := wire.FromRPC(context.Background(), status.Error(codes.Unavailable, "connection refused"), context.Background())
			if !errors.Is(got, sdk.ErrPluginUnavailable) || errors.Is(got, sdk.ErrPluginExited) {
				t.Errorf("got %v, want sdk.ErrPluginUnavailable", got)
			}
			if waited := time.Since(start); waited != wire.ExitWait {
				t.Errorf("waited %v, want %v", waited, wire.ExitWait)
			}
		})
	})
	t.Run("call context ends the wait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			got := wire.FromRPC(ctx, io.ErrUnexpectedEOF, context.Background())
			if !errors.Is(got, sdk.ErrPluginUnavailable) || !errors.Is(got, context.DeadlineExceeded) {
				t.Errorf("got %v, want sdk.ErrPluginUnavailable and context.DeadlineExceeded", got)
			}
		})
	})
}

// infoServer answers Info with resp.
type infoServer struct {
	pluginv1.UnimplementedPluginServiceServer
	resp *pluginv1.InfoResponse
}

func (s infoServer) Info(context.Context, *pluginv1.InfoRequest) (*pluginv1.InfoResponse, error) {
	return s.resp, nil
}

func (s infoServer) Configure(context.Context, *pluginv1.ConfigureRequest) (*pluginv1.ConfigureResponse, error) {
	return &pluginv1.ConfigureResponse{Diagnostics: []*pluginv1.Diagnostic{{Severity: 9, Summary: "odd"}}}, nil
}

func TestMalformedInfoIsBadResponse(t *testing.T) {
	valid := func() *pluginv1.InfoResponse {
		return &pluginv1.InfoResponse{Kind: pluginv1.Kind_KIND_HOOK, ConfigSchema: &pluginv1.ConfigSchema{
			Attributes: []*pluginv1.Attribute{{Name: "a", Type: `"string"`}},
			Blocks: []*pluginv1.NestedBlock{{TypeName: "b", Nesting: pluginv1.Nesting_NESTING_MAP, Block: &pluginv1.ConfigSchema{
				Attributes: []*pluginv1.Attribute{{Name: "c", Type: `["list","number"]`, DefaultJson: []byte(`[1]`)}},
			}}},
		}}
	}
	for _, tt := range []struct {
		name   string
		mutate func(*pluginv1.InfoResponse)
	}{
		{"valid", func(*pluginv1.InfoResponse) {}},
		{"unspecified kind", func(r *pluginv1.InfoResponse) { r.Kind = pluginv1.Kind_KIND_UNSPECIFIED }},
		{"another kind", func(r *pluginv1.InfoResponse) { r.Kind = pluginv1.Kind_KIND_LAUNCHER }},
		{"unknown kind", func(r *pluginv1.InfoResponse) { r.Kind = 42 }},
		{"type not JSON", func(r *pluginv1.InfoResponse) { r.ConfigSchema.Attributes[0].Type = "string" }},
		{"nameless attribute", func(r *pluginv1.InfoResponse) { r.ConfigSchema.Attributes[0].Name = "" }},
		{"unspecified nesting", func(r *pluginv1.InfoResponse) { r.ConfigSchema.Blocks[0].Nesting = 0 }},
		{"bad default", func(r *pluginv1.InfoResponse) {
			r.ConfigSchema.Blocks[0].Block.Attributes[0].DefaultJson = []byte("[1")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := valid()
			tt.mutate(resp)
			conn, server := plugin.TestGRPCConn(t, func(s *grpc.Server) {
				pluginv1.RegisterPluginServiceServer(s, infoServer{resp: resp})
			})
			defer server.Stop()
			defer conn.Close()
			info, err := wire.NewPluginClient(conn, nil, sdk.KindHook).Info(t.Context())
			if tt.name == "valid" {
				if err != nil {
					t.Fatal(err)
				}
				want := &sdk.ConfigSchema{
					Attributes: []sdk.Attribute{{Name: "a", Type: sdk.TypeString}},
					Blocks: []sdk.NestedBlock{{TypeName: "b", Nesting: sdk.NestingMap, Block: sdk.ConfigSchema{
						Attributes: []sdk.Attribute{{Name: "c", Type: sdk.ListOf(sdk.TypeNumber), Default: json.RawMessage(`[1]`)}},
					}}},
				}
				if diff := cmp.Diff(want, info.ConfigSchema); diff != "" {
					t.Errorf("schema (-want +got):\n%s", diff)
				}
				return
			}
			if !errors.Is(err, sdk.ErrBadResponse) {
				t.Errorf("got %v, want sdk.ErrBadResponse", err)
			}
		})
	}
}

func TestUnknownSeverityIsBadResponse(t *testing.T) {
	conn, server := plugin.TestGRPCConn(t, func(s *grpc.Server) {
		pluginv1.RegisterPluginServiceServer(s, infoServer{})
	})
	defer server.Stop()
	defer conn.Close()
	if _, err := wire.NewPluginClient(conn, nil, sdk.KindHook).Configure(t.Context(), json.RawMessage(`{}`)); !errors.Is(err, sdk.ErrBadResponse) {
		t.Errorf("got %v, want sdk.ErrBadResponse", err)
	}
}
