package wire

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/toolgate/toolgate/sdk"
)

// This file is the only place where errors cross the process boundary, in
// both directions. ToStatus runs in the plugin, FromRPC in the host; the
// codes they agree on are documented in plugin.proto.

// ExitWait bounds how long FromRPC waits, after an Unavailable status, for
// go-plugin to report that the plugin process exited. A crash usually fails
// the call (EOF, connection reset) a few milliseconds before go-plugin has
// reaped the process and cancelled its exit context; without the wait the
// host would see a bare "unavailable" for what is really a dead plugin.
const ExitWait = 3 * time.Second

// ToStatus turns an error returned by a plugin implementation into the
// status the host receives. Context errors keep their meaning,
// sdk.ErrNotConfigured becomes FAILED_PRECONDITION, anything else UNKNOWN
// with the error's text (a status the implementation got from some other
// gRPC service is not passed on: its code would mean something else here).
func ToStatus(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, sdk.ErrNotConfigured):
		return status.Error(codes.FailedPrecondition, err.Error())
	}
	return status.Error(codes.Unknown, err.Error())
}

// InvalidRequest is the status a plugin returns for a request that breaks
// the protocol (a host bug, or a host of another version).
func InvalidRequest(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, format, args...)
}

// Panicked is the status a plugin returns when its implementation panicked
// while serving a call; the process survives and serves other calls.
func Panicked(v any) error {
	return status.Errorf(codes.Internal, "plugin panicked: %v", v)
}

// FromRPC turns the error of a call to a plugin into the host's view:
//
//   - the plugin process exited (exited is done, now or within [ExitWait]
//     of an UNAVAILABLE status): sdk.ErrPluginExited;
//   - UNAVAILABLE without an exit: sdk.ErrPluginUnavailable;
//   - DEADLINE_EXCEEDED, CANCELLED: context.DeadlineExceeded,
//     context.Canceled;
//   - FAILED_PRECONDITION: sdk.ErrNotConfigured;
//   - anything else: *sdk.PluginError with the plugin's message.
//
// ctx is the call's context (it bounds the wait); exited is go-plugin's
// context that is cancelled when the plugin process exits, or nil when
// there is no process to watch.
func FromRPC(ctx context.Context, err error, exited context.Context) error {
	if err == nil {
		return nil
	}
	if exited == nil {
		exited = context.Background()
	}
	if exited.Err() != nil {
		return sdk.ErrPluginExited
	}
	st, ok := status.FromError(err)
	if !ok {
		// Not a status: the transport failed below gRPC.
		return waitForExit(ctx, exited, err.Error())
	}
	switch st.Code() {
	case codes.DeadlineExceeded:
		return context.DeadlineExceeded
	case codes.Canceled:
		return context.Canceled
	case codes.FailedPrecondition:
		return fmt.Errorf("%w: %s", sdk.ErrNotConfigured, st.Message())
	case codes.Unavailable:
		return waitForExit(ctx, exited, st.Message())
	}
	return &sdk.PluginError{Msg: st.Message()}
}

func waitForExit(ctx, exited context.Context, detail string) error {
	timer := time.NewTimer(ExitWait)
	defer timer.Stop()
	select {
	case <-exited.Done():
		return sdk.ErrPluginExited
	case <-timer.C:
		return fmt.Errorf("%w: %s", sdk.ErrPluginUnavailable, detail)
	case <-ctx.Done():
		return fmt.Errorf("%w: %s: %w", sdk.ErrPluginUnavailable, detail, ctx.Err())
	}
}

// BadResponse reports a response that breaks the protocol; the result
// matches sdk.ErrBadResponse.
func BadResponse(format string, args ...any) error {
	return fmt.Errorf("%w: %s", sdk.ErrBadResponse, fmt.Sprintf(format, args...))
}
