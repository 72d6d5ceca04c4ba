//go:build !linux

package wire

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/toolgate/toolgate/sdk/internal/pb/pluginv1"
)

// LaneSupported says whether this platform can offer and open direct
// lanes: it needs the peer's credentials of a unix socket, which only the
// Linux build checks.
const LaneSupported = false

// Offer refuses: no lanes here.
func (s *LaneServer) Offer() (*pluginv1.OpenLaneResponse, error) {
	return nil, status.Error(codes.Unimplemented, "the direct lane is not offered on this platform")
}

func dialLane(context.Context, *pluginv1.OpenLaneResponse, int) (*Lane, error) {
	return nil, errors.New("the direct lane is not supported on this platform")
}
