package catalog

import "strings"

// MayClaim reports whether tools of server, once it is ready, could take
// modelName or change which tool has it, so that a caller resolving
// modelName while server still starts must wait for it. unprefixed is
// the server's prefix = false: its tools may be named anything.
//
// A prefixed server's names start with its namespace, hashed or not
// (the hash follows the namespace), and only names that start with it
// can collide with its names. The test is conservative: server "a"
// claims every name starting "mcp__a", "mcp__ab__x" included.
func MayClaim(server string, unprefixed bool, modelName string) bool {
	if unprefixed {
		return true
	}
	return strings.HasPrefix(modelName, newServerNaming(server, nil).ns)
}
