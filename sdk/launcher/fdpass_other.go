//go:build !linux

package launcher

import (
	"context"
	"errors"

	"github.com/toolgate/toolgate/sdk/internal/pb/launcherv1"
)

// fdPassingSupported: only Linux passes descriptors today; elsewhere
// every process's I/O uses the stream.
const fdPassingSupported = false

var errFDPassingUnsupported = errors.New("passing descriptors is not supported on this system")

// fdOffer is never made here.
type fdOffer struct{}

func newFDOffer(Process, fdFaults) (*fdOffer, error) { return nil, errFDPassingUnsupported }

func (*fdOffer) pb() *launcherv1.FdOffer { return nil }

func (*fdOffer) close() (bool, error) { return false, errFDPassingUnsupported }

func fetchFDs(context.Context, *launcherv1.FdOffer, fdFaults) (*stdioFiles, error) {
	return nil, errFDPassingUnsupported
}
