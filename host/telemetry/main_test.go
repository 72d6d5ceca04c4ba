package telemetry_test

import (
	"os"
	"testing"

	"github.com/toolgate/toolgate/internal/testbin"
)

func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }
