//go:build unix

package launcher_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/toolgate/toolgate/sdk/launcher"
)

// plainLocal is a complete launcher: it runs every stdio server of its
// environment on this machine. spec.Env holds only the server's explicit
// variables, so it adds PATH first (later entries win). StartCommand gives
// the process pipes, its own process group and, on Linux, a containment
// cell, and ends it when the plugin dies.
type plainLocal struct{}

func (plainLocal) Start(_ context.Context, spec launcher.Spec) (launcher.Process, error) {
	cmd := exec.Command(spec.Command, spec.Args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, spec.Environ()...)
	cmd.Dir = spec.Dir
	return launcher.StartCommand(cmd)
}

// A launcher plugin is a type with a Start method and a main that serves
// it:
//
//	func main() { launcher.Serve(plainLocal{}) }
//
// The SDK then carries the process's stdin and stdout to toolgate, which
// speaks MCP over them. Here a process is started and talked to directly;
// to test a launcher the way toolgate runs it, use
// sdk/plugintest.Launcher.
func Example() {
	p, err := plainLocal{}.Start(context.Background(), launcher.Spec{
		Server:  "greeter",
		Command: "sh",
		Args:    []string{"-c", `read name; echo "$GREETING, $name"`},
		Env:     map[string]string{"GREETING": "hello"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Fprintln(p.Stdin(), "world")
	_ = p.Stdin().Close()
	out, _ := io.ReadAll(p.Stdout())
	_, _ = io.Copy(io.Discard, p.Stderr())
	fmt.Print(string(out))
	fmt.Println(p.Wait(context.Background()))
	// Output:
	// hello, world
	// <nil>
}
