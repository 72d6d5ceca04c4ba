//go:build unix

package contain

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testwait"
)

// stubborn starts, in a cell of its own, a shell that ignores stdin EOF
// and SIGTERM, and returns its Process.
func stubborn(t *testing.T, opts StartOptions) *Process {
	t.Helper()
	cell, _ := NewManager(KindProcessGroup).NewCell("stubborn") // the process group: enough here
	cmd := exec.Command("/bin/sh", "-c", `trap "" TERM; echo ready; while :; do sleep 0.05; done`)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	p, err := cell.Start(cmd, opts)
	_ = w.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill(); <-p.Done(); _ = r.Close() })
	buf := make([]byte, 6)
	if _, err := r.Read(buf); err != nil || string(buf) != "ready\n" {
		t.Fatalf("child did not start: %q, %v", buf, err)
	}
	return p
}

func killedBy(t *testing.T, p *Process, want syscall.Signal) {
	t.Helper()
	ws, ok := p.State().Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != want {
		t.Errorf("child ended with %v; want killed by %v", p.State(), want)
	}
}

// TestStopEscalatesToKill: a child that ignores stdin EOF and SIGTERM is
// killed after both graces, and Stop reports each escalation.
func TestStopEscalatesToKill(t *testing.T) {
	var steps []Step
	p := stubborn(t, StartOptions{
		CloseStdin: func() error { return nil },
		OnEscalate: func(s Step, _ time.Duration) { steps = append(steps, s) },
	})
	stopped := make(chan error, 1)
	go func() { stopped <- p.Stop(context.Background(), 20*time.Millisecond, 20*time.Millisecond) }()
	if err := testwait.Recv(t, stopped, "Stop of a child that ignores SIGTERM"); err != nil {
		t.Errorf("Stop: %v", err)
	}
	killedBy(t, p, syscall.SIGKILL)
	if len(steps) != 2 || steps[0] != StepTerm || steps[1] != StepKill {
		t.Errorf("escalation steps %v; want [%v %v]", steps, StepTerm, StepKill)
	}
}

// TestStopKillsAtOnceWhenContextEnds: an ended context skips the graces.
func TestStopKillsAtOnceWhenContextEnds(t *testing.T) {
	p := stubborn(t, StartOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- p.Stop(ctx, time.Hour, time.Hour) }()
	testwait.Recv(t, stopped, "Stop with an ended context")
	killedBy(t, p, syscall.SIGKILL)
}

// TestStopEndsAtSIGTERM: a child that exits on SIGTERM never gets
// SIGKILL.
func TestStopEndsAtSIGTERM(t *testing.T) {
	cell, _ := NewManager(KindProcessGroup).NewCell("polite")
	p, err := cell.Start(exec.Command("/bin/sh", "-c", "while :; do sleep 0.05; done"), StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- p.Stop(context.Background(), 10*time.Millisecond, time.Hour) }()
	testwait.Recv(t, stopped, "Stop of a child that exits on SIGTERM")
	killedBy(t, p, syscall.SIGTERM)
}

// TestKillRestEndsLeftoversAtOnce: with KillRest, what an exited leader
// left in its group is SIGKILLed at once, SIGTERM or not, rather than
// after ExitGrace (an hour here, so without KillRest Done would not come).
func TestKillRestEndsLeftoversAtOnce(t *testing.T) {
	cell, _ := NewManager(KindProcessGroup).NewCell("short")
	cmd := exec.Command("/bin/sh", "-c", `(trap "" TERM; while :; do sleep 0.05; done) </dev/null >/dev/null 2>&1 & echo $!`)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	p, err := cell.Start(cmd, StartOptions{KillRest: true, ExitGrace: time.Hour})
	_ = w.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill(); _ = r.Close() })
	buf := make([]byte, 16)
	n, _ := r.Read(buf)
	var left int
	if _, err := fmt.Sscan(string(buf[:n]), &left); err != nil {
		t.Fatalf("no pid of the leftover: %q", buf[:n])
	}
	t.Cleanup(func() { _ = syscall.Kill(left, syscall.SIGKILL) })
	testwait.RecvOK(t, p.Done(), "the leader's end, with a leftover that ignores SIGTERM")
	if err := procwatch.WaitGone(testwait.Context(t), left); err != nil {
		t.Errorf("the leftover outlived its leader: %v", err)
	}
}
