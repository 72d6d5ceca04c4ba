package mcpdemo

import "errors"

// spawnEscapingChild needs setsid, which Windows does not have.
func spawnEscapingChild(string) error {
	return errors.New("--spawn-escaping-child is not supported on Windows")
}
