package terminal

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/config"
)

func boolp(b bool) *bool { return &b }

var allChoices = []approval.Choice{
	approval.ChoiceAllow, approval.ChoiceAllowSession, approval.ChoiceAllowAlways,
	approval.ChoiceDecline, approval.ChoiceCancel,
}

func prompt(choices ...approval.Choice) approval.Prompt {
	if len(choices) == 0 {
		choices = allChoices
	}
	return approval.Prompt{
		Request: approval.Request{
			CallID:      "call-1",
			SessionID:   "s1",
			Server:      "files",
			Tool:        "write_file",
			ModelName:   "mcp__files__write_file",
			Arguments:   json.RawMessage(`{"path":"notes/a.txt","content":"hello","mode":420}`),
			Annotations: &mcp.ToolAnnotations{DestructiveHint: boolp(true), OpenWorldHint: boolp(false)},
			Title:       "Write file",
			Description: "Writes a file to disk.\nSecond line that is not shown.",
		},
		Mode:     config.ModeAuto,
		Question: `Allow the files MCP server to run tool "write_file"?`,
		Choices:  choices,
	}
}

func TestAskApprovalKeys(t *testing.T) {
	for _, tt := range []struct {
		answer string
		want   approval.Choice
	}{
		{"y", approval.ChoiceAllow},
		{"Y", approval.ChoiceAllow},
		{"yes", approval.ChoiceAllow},
		{"s", approval.ChoiceAllowSession},
		{"a", approval.ChoiceAllowAlways},
		{" n ", approval.ChoiceDecline},
		{"no", approval.ChoiceDecline},
		{"c", approval.ChoiceCancel},
	} {
		t.Run(tt.answer, func(t *testing.T) {
			r := newRig(t, Options{Interactive: true})
			got := async(func() (approval.Choice, error) { return r.term.AskApproval(t.Context(), prompt()) })
			r.screen.waitFor(t, "> ")
			r.answer(t, tt.answer)
			c, err := await(t, got)
			if err != nil || c != tt.want {
				t.Errorf("AskApproval = %v, %v; want %v", c, err, tt.want)
			}
		})
	}
}

// TestAskApprovalPromptText pins what the user sees: who runs what, with
// which hints and arguments, and which keys answer.
func TestAskApprovalPromptText(t *testing.T) {
	r := newRig(t, Options{Interactive: true})
	got := async(func() (approval.Choice, error) { return r.term.AskApproval(t.Context(), prompt()) })
	text := r.screen.waitFor(t, "> ")
	r.answer(t, "n")
	if _, err := await(t, got); err != nil {
		t.Fatal(err)
	}
	want := `
toolgate: approve MCP tool call?
  server:     files
  tool:       write_file
  model name: mcp__files__write_file
  title:      Write file
  about:      Writes a file to disk.
  hints:      may modify its environment, destructive, closed-world, not idempotent
  arguments:
    {
      "path": "notes/a.txt",
      "content": "hello",
      "mode": 420
    }

Allow the files MCP server to run tool "write_file"?
  [y] Allow
  [s] Allow for this session
  [a] Allow and don't ask me again
  [n] Decline
  [c] Cancel
> `
	if text != want {
		t.Errorf("prompt:\n%s\nwant:\n%s", text, want)
	}
}

func TestAskApprovalRendering(t *testing.T) {
	long := strings.Repeat("x", 500) + "END"
	for _, tt := range []struct {
		name    string
		edit    func(*approval.Prompt)
		want    []string
		notWant []string
	}{
		{
			name: "absent annotations show the defaults",
			edit: func(p *approval.Prompt) { p.Annotations = nil },
			want: []string{"hints:      none declared (assumed: may modify, destructive, open-world)"},
		},
		{
			name: "absent hints are named as defaults",
			edit: func(p *approval.Prompt) {
				p.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, Title: "Read it"}
				p.Title = ""
			},
			want: []string{
				"title:      Read it",
				"hints:      read-only, destructive (not declared; the default), open-world (not declared; the default), idempotent",
			},
		},
		{
			name: "long strings are cut in the middle",
			edit: func(p *approval.Prompt) { p.Arguments = json.RawMessage(`{"content":"` + long + `"}`) },
			want: []string{`"content": "xxxx`, "chars truncated…", `xxEND"`},
		},
		{
			name: "many lines are capped",
			edit: func(p *approval.Prompt) {
				items := make([]string, 100)
				for i := range items {
					items[i] = `"item"`
				}
				p.Arguments = json.RawMessage(`{"list":[` + strings.Join(items, ",") + `]}`)
			},
			want: []string{"… (64 more lines not shown)"},
		},
		{
			name: "no arguments",
			edit: func(p *approval.Prompt) { p.Arguments = nil },
			want: []string{"  arguments:\n    (none)\n"},
		},
		{
			name:    "invalid JSON is shown as text",
			edit:    func(p *approval.Prompt) { p.Arguments = json.RawMessage(`{oops`) },
			want:    []string{"    {oops\n"},
			notWant: []string{},
		},
		{
			name: "escape sequences and bidi overrides from the server are neutralized",
			edit: func(p *approval.Prompt) {
				p.Description = "\x1b[2J\x1b[Hinnocent \u202eexe.txt"
				p.Title = "a\x07b"
			},
			want:    []string{`about:      \x1b[2J\x1b[Hinnocent \u202eexe.txt`, `title:      a\x07b`},
			notWant: []string{"\x1b", "\u202e", "\x07"},
		},
		{
			name: "only offered choices are listed",
			edit: func(p *approval.Prompt) {
				p.Mode = config.ModePrompt
				p.Choices = []approval.Choice{approval.ChoiceAllow, approval.ChoiceDecline, approval.ChoiceCancel}
			},
			want:    []string{"  [y] Allow\n  [n] Decline\n  [c] Cancel\n> "},
			notWant: []string{"[s]", "[a]"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, Options{Interactive: true})
			p := prompt()
			tt.edit(&p)
			got := async(func() (approval.Choice, error) { return r.term.AskApproval(t.Context(), p) })
			text := r.screen.waitFor(t, "\n> ")
			r.answer(t, "n")
			if _, err := await(t, got); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("prompt lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(text, w) {
					t.Errorf("prompt contains %q:\n%s", w, text)
				}
			}
		})
	}
}

func TestAskApprovalColor(t *testing.T) {
	r := newRig(t, Options{Interactive: true, Color: true})
	got := async(func() (approval.Choice, error) { return r.term.AskApproval(t.Context(), prompt()) })
	text := r.screen.waitFor(t, "\n> ")
	r.answer(t, "n")
	if _, err := await(t, got); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "\x1b[1mtoolgate: approve MCP tool call?\x1b[0m") || !strings.Contains(text, "\x1b[31mdestructive\x1b[0m") {
		t.Errorf("colored prompt lacks bold header or red destructive hint:\n%q", text)
	}
}

func TestAskApprovalReasks(t *testing.T) {
	r := newRig(t, Options{Interactive: true})
	p := prompt(approval.ChoiceAllow, approval.ChoiceDecline, approval.ChoiceCancel)
	got := async(func() (approval.Choice, error) { return r.term.AskApproval(t.Context(), p) })
	r.screen.waitFor(t, "> ")
	for _, bad := range []string{"maybe", "", "s"} { // "s" is not offered here
		r.answer(t, bad)
		r.screen.waitFor(t, "Please answer y, n or c.\n> ")
	}
	r.answer(t, "y")
	if c, err := await(t, got); err != nil || c != approval.ChoiceAllow {
		t.Errorf("AskApproval = %v, %v; want Allow", c, err)
	}
}

func TestAskApprovalEOFCancels(t *testing.T) {
	r := newRig(t, Options{Interactive: true})
	got := async(func() (approval.Choice, error) { return r.term.AskApproval(t.Context(), prompt()) })
	r.screen.waitFor(t, "> ")
	_ = r.input.Close()
	if c, err := await(t, got); err != nil || c != approval.ChoiceCancel {
		t.Errorf("AskApproval at EOF = %v, %v; want Cancel", c, err)
	}
	r.screen.waitFor(t, "(end of input: cancelled)")
	// Input is gone for good: later questions are cancelled at once.
	if c, err := r.term.AskApproval(t.Context(), prompt()); err != nil || c != approval.ChoiceCancel {
		t.Errorf("AskApproval after EOF = %v, %v; want Cancel", c, err)
	}
}

func TestNotInteractive(t *testing.T) {
	scr := &screen{}
	term := New(strings.NewReader("y\n"), scr, Options{Interactive: false})
	defer term.Close()
	_, err := term.AskApproval(t.Context(), prompt())
	if !errors.Is(err, approval.ErrNobodyToAsk) || !strings.Contains(err.Error(), "stdin is not a terminal") {
		t.Errorf("AskApproval error = %v, want ErrNobodyToAsk saying stdin is not a terminal", err)
	}
	_, err = term.Elicit(t.Context(), approval.Elicitation{Server: "files", Params: &mcp.ElicitParams{Message: "hi"}})
	if !errors.Is(err, approval.ErrNobodyToAsk) {
		t.Errorf("Elicit error = %v, want ErrNobodyToAsk", err)
	}
	if out := scr.all(); out != "" {
		t.Errorf("wrote %q, want nothing", out)
	}
}

func TestAskApprovalContextCancelled(t *testing.T) {
	r := newRig(t, Options{Interactive: true})
	ctx, cancel := context.WithCancel(t.Context())
	got := async(func() (approval.Choice, error) { return r.term.AskApproval(ctx, prompt()) })
	r.screen.waitFor(t, "> ")
	cancel()
	_, err := await(t, got)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("AskApproval error = %v, want context.Canceled", err)
	}
	r.screen.waitFor(t, "(no longer needed: the call was cancelled)")

	// The terminal still works for the next question.
	next := async(func() (approval.Choice, error) { return r.term.AskApproval(t.Context(), prompt()) })
	r.screen.waitFor(t, "> ")
	r.answer(t, "y")
	if c, err := await(t, next); err != nil || c != approval.ChoiceAllow {
		t.Errorf("next AskApproval = %v, %v; want Allow", c, err)
	}
}

// TestAskApprovalSerialized checks that two concurrent questions are
// shown one after the other, and that one waiting for its turn still
// honours its ctx.
func TestAskApprovalSerialized(t *testing.T) {
	r := newRig(t, Options{Interactive: true})
	first := async(func() (approval.Choice, error) { return r.term.AskApproval(t.Context(), prompt()) })
	r.screen.waitFor(t, "\n> ")

	ctx, cancel := context.WithCancel(t.Context())
	waiting := async(func() (approval.Choice, error) { return r.term.AskApproval(ctx, prompt()) })
	cancel()
	if _, err := await(t, waiting); !errors.Is(err, context.Canceled) {
		t.Errorf("waiting AskApproval error = %v, want context.Canceled", err)
	}

	second := async(func() (approval.Choice, error) { return r.term.AskApproval(t.Context(), prompt()) })
	r.answer(t, "y")
	if c, err := await(t, first); err != nil || c != approval.ChoiceAllow {
		t.Fatalf("first = %v, %v; want Allow", c, err)
	}
	r.screen.waitFor(t, "\n> ")
	r.answer(t, "n")
	if c, err := await(t, second); err != nil || c != approval.ChoiceDecline {
		t.Fatalf("second = %v, %v; want Decline", c, err)
	}
	if n := strings.Count(r.screen.all(), "toolgate: approve MCP tool call?"); n != 2 {
		t.Errorf("%d prompts shown, want 2 (the cancelled one never showed)", n)
	}
}

// TestTypeAheadIsDiscarded: a line typed while no question was on screen
// must not answer the next question.
func TestTypeAheadIsDiscarded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pr, pw := io.Pipe()
		scr := &screen{}
		term := New(pr, scr, Options{Interactive: true})

		first := async(func() (approval.Choice, error) { return term.AskApproval(t.Context(), prompt()) })
		synctest.Wait()
		_, _ = io.WriteString(pw, "n\n")
		if c, _ := await(t, first); c != approval.ChoiceDecline {
			t.Fatalf("first = %v, want Decline", c)
		}

		_, _ = io.WriteString(pw, "y\n") // typed ahead: nobody is asking
		synctest.Wait()
		time.Sleep(time.Second) // fake clock: the next question comes later

		second := async(func() (approval.Choice, error) { return term.AskApproval(t.Context(), prompt()) })
		synctest.Wait()
		_, _ = io.WriteString(pw, "c\n")
		if c, _ := await(t, second); c != approval.ChoiceCancel {
			t.Errorf("second = %v, want Cancel: the typed-ahead y must be discarded", c)
		}
		_ = pw.Close()
		_ = term.Close()
	})
}

// Close ends the reader too, so a waiting question can find both "closed"
// and "end of input" ready at once; it must report the first, every time.
func TestCloseIsNeverTakenForEndOfInput(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	term := New(pr, &screen{}, Options{Interactive: true})
	term.startReader.Do(func() { go term.readLoop() })
	if err := term.Close(); err != nil {
		t.Fatal(err)
	}
	for range term.lines { // the reader has ended: lines is closed
	}
	for i := range 100 {
		if _, err := term.readLine(t.Context(), time.Time{}); !errors.Is(err, approval.ErrNobodyToAsk) {
			t.Fatalf("read %d after Close = %v, want ErrNobodyToAsk", i, err)
		}
	}
}

func TestClose(t *testing.T) {
	r := newRig(t, Options{Interactive: true})
	got := async(func() (approval.Choice, error) { return r.term.AskApproval(t.Context(), prompt()) })
	r.screen.waitFor(t, "> ")
	if err := r.term.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := await(t, got); !errors.Is(err, approval.ErrNobodyToAsk) {
		t.Errorf("AskApproval after Close = %v, want ErrNobodyToAsk", err)
	}
	if _, err := r.term.AskApproval(t.Context(), prompt()); !errors.Is(err, approval.ErrNobodyToAsk) {
		t.Errorf("new AskApproval after Close = %v, want ErrNobodyToAsk", err)
	}
	if err := r.term.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
