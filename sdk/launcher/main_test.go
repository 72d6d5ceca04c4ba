package launcher_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolgate/toolgate/sdk/launcher"
)

// The test binary doubles as every child process these tests launch: with
// helperEnv set, TestMain runs that behaviour instead of the tests.
const helperEnv = "TOOLGATE_SDK_LAUNCHER_HELPER"

func TestMain(m *testing.M) {
	launcher.RunSupervisorIfAsked()
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	goleak.VerifyTestMain(m)
}

// helperSpecEnv is a child's environment for mode. Race-enabled binaries
// sleep a second at exit unless told not to.
func helperSpecEnv(mode string, extra ...string) map[string]string {
	env := map[string]string{helperEnv: mode, "GORACE": "atexit_sleep_ms=0"}
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env
}

func runHelper(mode string) int {
	switch mode {
	case "echo":
		_, _ = io.Copy(os.Stdout, os.Stdin)
		return 0
	case "count":
		// Reports what it read once stdin reaches EOF.
		n, err := io.Copy(io.Discard, os.Stdin)
		fmt.Printf("read %d bytes, then %v\n", n, errOrEOF(err))
		return 0
	case "exit":
		fmt.Fprintln(os.Stderr, "about to fail")
		code, _ := strconv.Atoi(os.Getenv("EXIT_CODE"))
		return code
	case "hang":
		// Ignores stdin EOF; dies by SIGTERM (the default action).
		fmt.Println("ready")
		select {}
	case "ignore-term":
		signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM)
		fmt.Println("ready")
		select {}
	case "noisy-stderr":
		// A lot of stderr nobody reads must not hold back stdout.
		line := strings.Repeat("x", 1023) + "\n"
		w := bufio.NewWriter(os.Stderr)
		for range 1024 {
			_, _ = w.WriteString(line)
		}
		_ = w.Flush()
		_, _ = io.Copy(os.Stdout, os.Stdin)
		return 0
	case "spawn-holder":
		// Leaves a descendant that holds stdout (and ignores the SIGTERM
		// its group gets when this process exits), then exits.
		exe, _ := os.Executable()
		ready, readyW, err := os.Pipe()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		holder := exec.Command(exe)
		holder.Env = append(os.Environ(), helperEnv+"=hold-stdout")
		holder.Stdout, holder.Stderr = os.Stdout, readyW
		if err := holder.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		_ = readyW.Close()
		// Once it says so, the holder ignores SIGTERM.
		if _, err := ready.Read(make([]byte, 1)); err != nil {
			fmt.Fprintln(os.Stderr, "holder did not start:", err)
			return 1
		}
		fmt.Printf("holder %d\n", holder.Process.Pid)
		return 0
	case "hold-stdout":
		signal.Ignore(syscall.SIGTERM)
		fmt.Fprint(os.Stderr, "!")
		select {}
	case "plugin":
		// The test binary as a real launcher plugin process.
		launcher.Serve(local{})
		return 0
	case "env":
		fmt.Println(os.Getenv("GREETING"))
		wd, _ := os.Getwd()
		fmt.Println(wd)
		return 0
	default:
		fmt.Fprintf(os.Stderr, "unknown helper mode %q\n", mode)
		return 2
	}
}

func errOrEOF(err error) string {
	if err == nil {
		return "EOF"
	}
	return err.Error()
}
