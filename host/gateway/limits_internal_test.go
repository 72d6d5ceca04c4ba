package gateway

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCallQueuesAreBounded: a server that reports progress and logs
// faster than the upstream client reads them costs a bounded queue per
// call; the oldest entries go, are counted, and the newest are kept.
func TestCallQueuesAreBounded(t *testing.T) {
	c := &call{
		s:    &session{log: hclog.NewNullLogger()},
		tool: &servedTool{name: "t"},
		wake: make(chan struct{}, 1),
	}
	const sent = 1000
	for i := range sent {
		c.queueProgress(&mcp.ProgressNotificationParams{Progress: float64(i)})
		c.queueLog(&mcp.LoggingMessageParams{Data: i})
	}
	if len(c.progress) != maxQueuedProgress || c.droppedProgress != sent-maxQueuedProgress {
		t.Errorf("progress: %d queued, %d dropped; want %d and %d", len(c.progress), c.droppedProgress, maxQueuedProgress, sent-maxQueuedProgress)
	}
	if first, last := c.progress[0].Progress, c.progress[len(c.progress)-1].Progress; first != sent-maxQueuedProgress || last != sent-1 {
		t.Errorf("progress kept %v..%v, want the newest (%d..%d)", first, last, sent-maxQueuedProgress, sent-1)
	}
	if len(c.logs) != maxQueuedLogs || c.droppedLogs != sent-maxQueuedLogs || c.logs[0].Data != sent-maxQueuedLogs {
		t.Errorf("logs: %d queued, %d dropped, oldest %v", len(c.logs), c.droppedLogs, c.logs[0].Data)
	}
}

// TestEndedSessionIdleTimerStaysStopped: a request that was open when
// its session ended (the DELETE that ended it) must not re-arm the idle
// timer, whose callback would keep the ended session reachable for the
// whole timeout.
func TestEndedSessionIdleTimerStaysStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fired := false
		timer := newIdleTimer(time.Minute, func() { fired = true })
		timer.begin() // the DELETE
		timer.stop()  // the session ends while it is open
		timer.end()   // the DELETE's answer is written
		time.Sleep(2 * time.Minute)
		if fired {
			t.Error("the idle timer of an ended session fired: it was re-armed, holding the session")
		}
	})
}
