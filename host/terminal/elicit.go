package terminal

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/approval"
)

// Elicitation actions (MCP wire values).
const (
	actionAccept  = "accept"
	actionDecline = "decline"
	actionCancel  = "cancel"
)

// Words that stop a form at any question.
const (
	stopDecline = ":decline"
	stopCancel  = ":cancel"
)

// Elicit answers a server's elicitation/create. A form is asked field by
// field following the requested schema, then the user accepts, declines
// or cancels; a URL request shows the URL (it is never opened for the
// user) and waits until the user says they finished. EOF on input is
// Cancel. Errors are as for [Terminal.AskApproval].
func (t *Terminal) Elicit(ctx context.Context, e approval.Elicitation) (*mcp.ElicitResult, error) {
	done, err := t.begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("elicit input: %w", err)
	}
	defer done()
	if e.Params == nil {
		return &mcp.ElicitResult{Action: actionDecline}, nil
	}
	since := time.Now()
	var res *mcp.ElicitResult
	if isURLMode(e.Params) {
		res, err = t.elicitURL(ctx, since, e)
	} else {
		res, err = t.elicitForm(ctx, since, e)
	}
	if err != nil {
		t.interrupted(err)
		if isEOF(err) {
			return &mcp.ElicitResult{Action: actionCancel}, nil
		}
		return nil, fmt.Errorf("elicit input: %w", err)
	}
	return res, nil
}

func isURLMode(p *mcp.ElicitParams) bool {
	if p.Mode != "" {
		return p.Mode == "url"
	}
	return p.URL != "" || p.ElicitationID != ""
}

func (t *Terminal) header(e approval.Elicitation, what string) string {
	var b strings.Builder
	b.WriteString("\n" + t.style.bold(fmt.Sprintf("toolgate: the %s MCP server %s", clean(e.Server), what)) + "\n")
	for _, l := range lines(e.Params.Message) {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

func (t *Terminal) elicitURL(ctx context.Context, since time.Time, e approval.Elicitation) (*mcp.ElicitResult, error) {
	var b strings.Builder
	b.WriteString(t.header(e, "asks you to open a URL"))
	fmt.Fprintf(&b, "  %-5s %s\n", "URL:", t.style.bold(clean(e.Params.URL)))
	if u, err := url.Parse(e.Params.URL); err == nil && u.Host != "" {
		fmt.Fprintf(&b, "  %-5s %s\n", "host:", clean(u.Hostname()))
		if u.Scheme != "https" {
			b.WriteString("  " + t.style.yellow("note: this URL is not https") + "\n")
		}
	}
	b.WriteString("Open it in your browser and finish there; toolgate does not open it for you.\n")
	b.WriteString("[a] I have finished (accept)  [d] decline  [c] cancel\n> ")
	if err := t.write(b.String()); err != nil {
		return nil, err
	}
	action, err := t.finalAnswer(ctx, since)
	if err != nil {
		return nil, err
	}
	return &mcp.ElicitResult{Action: action}, nil
}

func (t *Terminal) elicitForm(ctx context.Context, since time.Time, e approval.Elicitation) (*mcp.ElicitResult, error) {
	fields, err := parseForm(e.Params.RequestedSchema)
	if err != nil {
		msg := t.header(e, "sent a form toolgate cannot show") +
			"  (" + clean(err.Error()) + "); declined.\n"
		if werr := t.write(msg); werr != nil {
			return nil, werr
		}
		return &mcp.ElicitResult{Action: actionDecline}, nil
	}
	intro := t.header(e, "asks for input")
	if len(fields) > 0 {
		intro += t.style.dim(fmt.Sprintf("(Answer each question; an empty answer takes the default or skips an optional field. "+
			"Type %s or %s to stop.)", stopDecline, stopCancel)) + "\n"
	}
	if err := t.write(intro); err != nil {
		return nil, err
	}

	content := map[string]any{}
	var summary []string
	for _, f := range fields {
		v, set, stop, err := t.askField(ctx, since, f)
		if err != nil {
			return nil, err
		}
		if stop != "" {
			return &mcp.ElicitResult{Action: stop}, nil
		}
		if set {
			content[f.name] = v
			summary = append(summary, fmt.Sprintf("  %s: %s", f.label(), f.show(v)))
		} else {
			summary = append(summary, fmt.Sprintf("  %s: %s", f.label(), t.style.dim("(skipped)")))
		}
	}

	var b strings.Builder
	if len(fields) > 0 {
		b.WriteString("\nYour answers:\n" + strings.Join(summary, "\n") + "\n")
	}
	fmt.Fprintf(&b, "Send this to the %s MCP server? [a]ccept / [d]ecline / [c]ancel\n> ", clean(e.Server))
	if err := t.write(b.String()); err != nil {
		return nil, err
	}
	action, err := t.finalAnswer(ctx, since)
	if err != nil {
		return nil, err
	}
	if action != actionAccept {
		return &mcp.ElicitResult{Action: action}, nil
	}
	return &mcp.ElicitResult{Action: actionAccept, Content: content}, nil
}

// askField asks one field until it has a valid answer. set is false for
// a skipped optional field; stop is a non-empty action when the user
// typed a stop word.
func (t *Terminal) askField(ctx context.Context, since time.Time, f field) (value any, set bool, stop string, err error) {
	var b strings.Builder
	b.WriteString("\n" + t.style.bold(f.label()) + " " + t.style.dim("("+f.describe()+")") + "\n")
	for _, l := range lines(f.description) {
		if l != "" {
			b.WriteString("  " + l + "\n")
		}
	}
	for i, o := range f.options {
		fmt.Fprintf(&b, "  %d) %s\n", i+1, f.optionLabel(o.value))
	}
	if f.hasDefault {
		b.WriteString("  default: " + f.show(f.def) + "\n")
	}
	b.WriteString("> ")
	if err := t.write(b.String()); err != nil {
		return nil, false, "", err
	}
	for {
		answer, err := t.readLine(ctx, since)
		if err != nil {
			return nil, false, "", err
		}
		switch strings.ToLower(strings.TrimSpace(answer)) {
		case stopDecline:
			return nil, false, actionDecline, nil
		case stopCancel:
			return nil, false, actionCancel, nil
		case "":
			if f.hasDefault {
				return f.def, true, "", nil
			}
			if !f.required {
				return nil, false, "", nil
			}
			if err := t.write(t.style.yellow("This field is required.") + "\n> "); err != nil {
				return nil, false, "", err
			}
			continue
		}
		v, perr := f.parse(answer)
		if perr == nil {
			return v, true, "", nil
		}
		if err := t.write(t.style.yellow(perr.Error()+"; try again.") + "\n> "); err != nil {
			return nil, false, "", err
		}
	}
}

// finalAnswer reads accept / decline / cancel.
func (t *Terminal) finalAnswer(ctx context.Context, since time.Time) (string, error) {
	for {
		answer, err := t.readLine(ctx, since)
		if err != nil {
			return "", err
		}
		switch strings.ToLower(strings.TrimSpace(answer)) {
		case "a", "accept":
			return actionAccept, nil
		case "d", "decline", stopDecline:
			return actionDecline, nil
		case "c", "cancel", stopCancel:
			return actionCancel, nil
		}
		if err := t.write(t.style.yellow("Please answer a, d or c.") + "\n> "); err != nil {
			return "", err
		}
	}
}
