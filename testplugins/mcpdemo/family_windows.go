package mcpdemo

import (
	"errors"
	"io"
)

// spawnFamily needs process groups and setsid, which Windows does not have.
func spawnFamily(string) error {
	return errors.New("--spawn-family is not supported on Windows")
}

func runFamilyParent(io.Writer) error {
	return errors.New("--family-parent is not supported on Windows")
}
