//go:build linux

package launch

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/contain"
	"go.uber.org/goleak"
)

// The test binary doubles as every child process these tests need: when
// helperModeEnv is set, TestMain runs that behaviour instead of the tests.
const (
	helperModeEnv  = "TOOLGATE_LAUNCH_HELPER"
	ownerEnv       = "TOOLGATE_LAUNCH_TEST_OWNER" // pid of the test run; marks its descendants
	exitCodeEnv    = "TOOLGATE_LAUNCH_EXIT_CODE"
	grandchildEnv  = "TOOLGATE_LAUNCH_GRANDCHILD"  // helper mode of the grandchild
	afterSpawnEnv  = "TOOLGATE_LAUNCH_AFTER_SPAWN" // "echo" or "exit" once the grandchild runs
	strayTimeout   = 10 * time.Second
	strayPollEvery = 10 * time.Millisecond
)

func TestMain(m *testing.M) {
	contain.RunSupervisorIfAsked()
	if mode := os.Getenv(helperModeEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if err := checkNoStrays(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
		os.Exit(code)
	}))
}

// helperEnv is the environment of a helper child: only what it needs.
// Race-enabled binaries sleep a second at exit unless told not to, which
// would look like a server ignoring stdin EOF.
func helperEnv(mode string, extra ...string) []string {
	return append([]string{
		helperModeEnv + "=" + mode,
		ownerEnv + "=" + ownerID(),
		"GORACE=atexit_sleep_ms=0",
	}, extra...)
}

func ownerID() string {
	if id := os.Getenv(ownerEnv); id != "" {
		return id // a helper that launches children passes the mark on
	}
	return strconv.Itoa(os.Getpid())
}

func runHelper(mode string) int {
	switch mode {
	case "echo":
		_, _ = io.Copy(os.Stdout, os.Stdin)
		return 0
	case "env":
		for _, kv := range os.Environ() {
			fmt.Println(kv)
		}
		return 0
	case "exit":
		code, _ := strconv.Atoi(os.Getenv(exitCodeEnv))
		return code
	case "hang":
		fmt.Println("ready")
		blockUntilSIGUSR1()
		return 0
	case "ignore-term":
		// Caught rather than SIG_IGN, which children would inherit.
		signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM)
		fmt.Println("ready")
		blockUntilSIGUSR1()
		return 0
	case "grandchild":
		return runGrandchildParent()
	case "launch":
		return runLaunchingHost()
	case "stderr":
		fmt.Fprint(os.Stderr, "first line\n", "crlf line\r\n", "\n", "bad \xff\xfe bytes\n",
			strings.Repeat("é", 5000)+"\n", "last line without newline")
		return 0
	default:
		fmt.Fprintf(os.Stderr, "unknown helper mode %q\n", mode)
		return 2
	}
}

func blockUntilSIGUSR1() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR1)
	<-c
}

// runGrandchildParent starts a grandchild in its own process group, waits
// until it is ready, prints its pid, then echoes stdin or exits with 3.
func runGrandchildParent() int {
	mode := os.Getenv(grandchildEnv)
	if mode == "" {
		mode = "hang"
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cmd := exec.Command(exe)
	cmd.Env = helperEnv(mode)
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "start grandchild:", err)
		return 2
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
		fmt.Fprintf(os.Stderr, "grandchild not ready: %q %v\n", line, err)
		return 2
	}
	fmt.Println(cmd.Process.Pid)
	if os.Getenv(afterSpawnEnv) == "exit" {
		return 3
	}
	_, _ = io.Copy(os.Stdout, os.Stdin)
	return 0
}

// runLaunchingHost plays a host: it launches a "hang" child through Local,
// prints the child's pid and blocks until it is killed.
func runLaunchingHost() int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	p, err := NewLocal(LocalOptions{}).Launch(context.Background(), Spec{
		Server: "orphan-candidate", Command: exe, Env: helperEnv("hang"),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if line, err := bufio.NewReader(p).ReadString('\n'); err != nil || line != "ready\n" {
		fmt.Fprintf(os.Stderr, "child not ready: %q %v\n", line, err)
		return 2
	}
	fmt.Println(p.Pid())
	blockUntilSIGUSR1()
	return 0
}

// checkNoStrays fails the run if a process marked as ours is still alive
// once the tests are done (allowing killed ones a moment to exit), and
// kills what it finds.
func checkNoStrays() error {
	deadline := time.Now().Add(strayTimeout)
	for {
		strays := findStrays()
		if len(strays) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			for _, pid := range strays {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			return fmt.Errorf("stray helper processes still alive after the tests: %v", strays)
		}
		timer := time.NewTimer(strayPollEvery)
		<-timer.C
	}
}

func findStrays() []int {
	mark := []byte(ownerEnv + "=" + strconv.Itoa(os.Getpid()) + "\x00")
	names, _ := readDirNames("/proc")
	var strays []int
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == os.Getpid() {
			continue
		}
		environ, err := os.ReadFile("/proc/" + name + "/environ")
		if err != nil || !bytes.Contains(environ, mark) {
			continue
		}
		if stat, err := os.ReadFile("/proc/" + name + "/stat"); err == nil {
			if state, _, ok := parseStat(stat); ok && (state == 'Z' || state == 'X') {
				continue
			}
		}
		strays = append(strays, pid)
	}
	return strays
}

func readDirNames(path string) ([]string, error) {
	dir, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	return dir.Readdirnames(-1)
}

// parseStat extracts the state and process group from /proc/<pid>/stat:
// "pid (comm) state ppid pgrp ...". comm may contain spaces and
// parentheses, so fields are counted after the last ')'.
func parseStat(stat []byte) (state byte, pgrp int, ok bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := bytes.Fields(stat[i+1:])
	if len(fields) < 3 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err := strconv.Atoi(string(fields[2]))
	if err != nil {
		return 0, 0, false
	}
	return fields[0][0], pgrp, true
}
