package terminal

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/toolgate/toolgate/host/approval"
)

// choiceKeys are the keys the user types. They are fixed per choice (not
// per position) so muscle memory is safe: "a" never means Allow in one
// prompt and something else in the next.
var choiceKeys = []struct {
	choice approval.Choice
	key    string
}{
	{approval.ChoiceAllow, "y"},
	{approval.ChoiceAllowSession, "s"},
	{approval.ChoiceAllowAlways, "a"},
	{approval.ChoiceDecline, "n"},
	{approval.ChoiceCancel, "c"},
}

func keyOf(c approval.Choice) (string, bool) {
	for _, k := range choiceKeys {
		if k.choice == c {
			return k.key, true
		}
	}
	return "", false
}

// AskApproval shows the call and the offered choices, and reads one
// answer. An unknown answer asks again; EOF on input is Cancel. It returns
// an error wrapping approval.ErrNobodyToAsk when not interactive or
// closed, and one wrapping ctx.Err() when ctx ends first.
func (t *Terminal) AskApproval(ctx context.Context, p approval.Prompt) (approval.Choice, error) {
	done, err := t.begin(ctx)
	if err != nil {
		return approval.ChoiceDecline, fmt.Errorf("ask approval: %w", err)
	}
	defer done()

	byKey := map[string]approval.Choice{}
	var keys []string
	for _, c := range p.Choices {
		if k, ok := keyOf(c); ok {
			byKey[k] = c
			keys = append(keys, k)
		}
	}
	// Common words, for users who do not read the keys.
	if c, ok := byKey["y"]; ok {
		byKey["yes"] = c
	}
	if c, ok := byKey["n"]; ok {
		byKey["no"] = c
	}

	since := time.Now()
	if err := t.write(t.renderApproval(p)); err != nil {
		return approval.ChoiceDecline, fmt.Errorf("ask approval: %w", err)
	}
	for {
		answer, err := t.readLine(ctx, since)
		if err != nil {
			t.interrupted(err)
			if isEOF(err) {
				return approval.ChoiceCancel, nil
			}
			return approval.ChoiceDecline, fmt.Errorf("ask approval: %w", err)
		}
		if c, ok := byKey[strings.ToLower(strings.TrimSpace(answer))]; ok {
			return c, nil
		}
		hint := t.style.yellow("Please answer " + orList(keys) + ".")
		if err := t.write(hint + "\n> "); err != nil {
			return approval.ChoiceDecline, fmt.Errorf("ask approval: %w", err)
		}
	}
}

func (t *Terminal) renderApproval(p approval.Prompt) string {
	st := t.style
	var b strings.Builder
	field := func(label, value string) {
		if value != "" {
			fmt.Fprintf(&b, "  %-11s %s\n", label+":", value)
		}
	}
	b.WriteString("\n" + st.bold("toolgate: approve MCP tool call?") + "\n")
	field("server", clean(p.Server))
	field("tool", st.bold(clean(p.Tool)))
	field("model name", clean(p.ModelName))
	title := p.Title
	if title == "" && p.Annotations != nil {
		title = p.Annotations.Title
	}
	field("title", firstLine(title))
	field("about", firstLine(p.Description))
	field("hints", describeAnnotations(p.Annotations, st))
	b.WriteString("  arguments:\n")
	for _, l := range formatArguments(p.Arguments) {
		b.WriteString("    " + l + "\n")
	}
	b.WriteString("\n" + st.bold(clean(p.Question)) + "\n")
	for _, c := range p.Choices {
		if k, ok := keyOf(c); ok {
			fmt.Fprintf(&b, "  [%s] %s\n", st.bold(k), c)
		}
	}
	b.WriteString("> ")
	return b.String()
}

// orList renders ["y","n","c"] as "y, n or c".
func orList(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
