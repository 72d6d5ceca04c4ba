// Command mcp-demo is toolgate's scriptable test MCP server; see package
// mcpdemo for its flags and tools, or run mcp-demo --help.
package main

import (
	"os"

	"github.com/toolgate/toolgate/testplugins/mcpdemo"
)

func main() {
	os.Exit(mcpdemo.Main(mcpdemo.Process{Args: os.Args[1:], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
}
