package ratelimit_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/host/identity"
	"github.com/toolgate/toolgate/host/ratelimit"
)

func TestLimiterKeepsABucketPerCallerAndSaysWhenToRetry(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	l := ratelimit.New([]ratelimit.Limit{{PerCaller: true, Calls: 2, Period: time.Minute, Burst: 2, Where: "config.hcl:12"}}, func() time.Time { return now })
	alice, bob := &identity.Caller{Subject: "alice"}, &identity.Caller{Subject: "bob"}
	for i := range 2 {
		if err := l.Admit(alice, "mcp__demo__echo"); err != nil {
			t.Fatalf("alice's call %d: %v", i+1, err)
		}
	}
	err := l.Admit(alice, "mcp__demo__echo")
	var le *ratelimit.LimitedError
	if !errors.As(err, &le) || !errors.Is(err, ratelimit.ErrLimited) {
		t.Fatalf("alice's third call: %v, want a rate limit", err)
	}
	// 2 calls a minute: the next token comes in 30 s.
	if le.RetryAfter != 30*time.Second || !strings.Contains(err.Error(), "Retry in 30 s (after 2026-01-02T03:04:35Z)") || !strings.Contains(err.Error(), `"alice"`) ||
		!strings.Contains(err.Error(), "at most 2 calls per 1m0s (limit at config.hcl:12)") {
		t.Errorf("refusal = %q, retry after %s", err, le.RetryAfter)
	}
	if err := l.Admit(bob, "mcp__demo__echo"); err != nil {
		t.Errorf("bob shares alice's bucket: %v", err)
	}
	now = now.Add(30 * time.Second)
	if err := l.Admit(alice, "mcp__demo__echo"); err != nil {
		t.Errorf("alice after waiting as told: %v", err)
	}
}

func TestLimiterMatchesCallersAndToolsAndRefundsOnRefusal(t *testing.T) {
	now := time.Now()
	l := ratelimit.New([]ratelimit.Limit{
		{Tools: []string{"mcp__demo__*"}, Calls: 10, Period: time.Minute, Burst: 10}, // shared
		{Callers: []string{"ci-*"}, PerCaller: true, PerTool: true, Calls: 1, Period: time.Hour, Burst: 1},
	}, func() time.Time { return now })
	ci := &identity.Caller{Subject: "ci-bot"}
	if err := l.Admit(ci, "mcp__demo__echo"); err != nil {
		t.Fatal(err)
	}
	if err := l.Admit(ci, "mcp__demo__add"); err != nil {
		t.Fatalf("per tool: another tool has its own bucket: %v", err)
	}
	// Refused by the second limit: the token the first took is given back.
	for range 5 {
		if err := l.Admit(ci, "mcp__demo__echo"); err == nil {
			t.Fatal("ci-bot's second echo within the hour was admitted")
		}
	}
	for i := range 8 {
		if err := l.Admit(nil, "mcp__demo__echo"); err != nil {
			t.Fatalf("unknown caller's call %d: %v (refused calls used the shared bucket)", i+1, err)
		}
	}
	if err := l.Admit(nil, "mcp__demo__echo"); err == nil {
		t.Error("the shared bucket of 10 admitted an 11th call")
	}
	if err := l.Admit(nil, "mcp__other__x"); err != nil {
		t.Errorf("a tool no limit matches: %v", err)
	}
}
