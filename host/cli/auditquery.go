package cli

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/host/ledger"
)

// auditQuery is `toolgate audit`: a streaming filter over ledger records.
type auditQuery struct {
	since, until string
	caller       string
	server, tool string
	decision     string
	step         string
	event        string
	callID       string
	asJSON       bool
	stats        bool
	shadowDiff   bool
	all          bool
	limit        int
}

func (q *auditQuery) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&q.since, "since", "", "records at or after this time (RFC 3339, or a duration ago such as 24h)")
	f.StringVar(&q.until, "until", "", "records before this time (RFC 3339, or a duration ago)")
	f.StringVar(&q.caller, "caller", "", "caller: subject, email or client id")
	f.StringVar(&q.server, "server", "", "server name")
	f.StringVar(&q.tool, "tool", "", "tool: raw name or model-visible name")
	f.StringVar(&q.decision, "decision", "", "approval decision: allow, deny or abstain")
	f.StringVar(&q.step, "step", "", "step that decided: mode, annotations, session, hook, guardian, user, pre_tool_use, audit")
	f.StringVar(&q.event, "event", "", "record kind, such as tool_call_begin or approval_decision")
	f.StringVar(&q.callID, "call", "", "call id")
	f.BoolVar(&q.asJSON, "json", false, "print matching records as JSON lines (as stored), or --stats as JSON")
	f.BoolVar(&q.stats, "stats", false, "count approval decisions per tool × decision × caller")
	f.BoolVar(&q.shadowDiff, "shadow-diff", false, "count calls where a shadow hook disagreed with the enforced decision, or failed")
	f.BoolVar(&q.all, "all", false, "include the ledger's own records (ledger_start, checkpoints, ...)")
	f.IntVar(&q.limit, "limit", 0, "stop after this many matching records (0 = all)")
}

// parseWhen reads an RFC 3339 time or a duration before now.
func parseWhen(flag, v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(v); err == nil {
		return now.Add(-d), nil
	}
	return time.Time{}, exit(ExitUsage, fmt.Errorf("--%s %q: give an RFC 3339 time (2026-12-01T09:00:00Z) or a duration ago (24h)", flag, v))
}

func (q *auditQuery) match(e *ledger.Entry, since, until time.Time) bool {
	switch {
	case !q.all && ledger.IsBookkeeping(e.Event):
		return false
	case !since.IsZero() && e.At.Before(since):
		return false
	case !until.IsZero() && !e.At.Before(until):
		return false
	case q.event != "" && e.Event != q.event:
		return false
	case q.server != "" && e.Server != q.server:
		return false
	case q.tool != "" && e.Tool != q.tool && e.ModelName != q.tool:
		return false
	case q.callID != "" && e.CallID != q.callID:
		return false
	case q.step != "" && e.Step != q.step:
		return false
	case q.decision != "" && e.Decision() != normalDecision(q.decision):
		return false
	case q.caller != "" && (e.Caller == nil || (e.Caller.Subject != q.caller && e.Caller.Email != q.caller && e.Caller.ClientID != q.caller)):
		return false
	}
	return true
}

func normalDecision(d string) string {
	switch d {
	case "approved":
		return "allow"
	case "denied":
		return "deny"
	}
	return d
}

type statKey struct{ Tool, Decision, Caller string }

func (q *auditQuery) run(g *globals, files []string) error {
	now := time.Now()
	since, err := parseWhen("since", q.since, now)
	if err != nil {
		return err
	}
	until, err := parseWhen("until", q.until, now)
	if err != nil {
		return err
	}
	if q.decision != "" && !map[string]bool{"allow": true, "deny": true, "abstain": true}[normalDecision(q.decision)] {
		return exit(ExitUsage, fmt.Errorf("--decision %q: use allow, deny or abstain", q.decision))
	}
	counts := map[statKey]int{}
	type shadowKey struct{ Tool, Enforced, Shadow, By string }
	shadow := map[shadowKey]int{}
	var tw *tabwriter.Writer
	if !q.stats && !q.shadowDiff && !q.asJSON {
		tw = tabwriter.NewWriter(g.io.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TIME\tSEQ\tEVENT\tCALLER\tSERVER\tTOOL\tDECISION\tSTEP\tBY\tCALL")
	}
	matched, unchained := 0, 0
	err = ledger.Scan(files, func(e *ledger.Entry) error {
		if e.Seq == 0 {
			unchained++
		}
		if !q.match(e, since, until) {
			return nil
		}
		switch {
		case q.shadowDiff:
			if e.Event == "shadow_decision" && (e.Differs || e.ShadowDecision == "error") {
				shadow[shadowKey{toolName(e), e.Enforced, e.ShadowDecision, e.By}]++
			}
			return nil
		case q.stats:
			if e.Event == "approval_decision" && e.Verdict != "abstain" {
				counts[statKey{toolName(e), e.Decision(), ledger.CallerName(e.Caller)}]++
			}
			return nil
		case q.asJSON:
			g.io.Out.Write(e.Raw)
			g.io.Out.Write([]byte{'\n'})
		default:
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.At.UTC().Format(time.RFC3339), e.Seq, e.Event,
				ledger.CallerName(e.Caller), dash(e.Server), dash(e.Tool), dash(e.Decision()), dash(e.Step), dash(e.By), dash(e.CallID))
		}
		matched++
		if q.limit > 0 && matched >= q.limit {
			return ledger.ErrStop
		}
		return nil
	})
	if err != nil {
		return exit(ExitFailure, err)
	}
	if unchained > 0 {
		fmt.Fprintf(g.io.Err, "note: %d record(s) are not chained (an audit log written before the ledger): they are read, but `toolgate audit verify` cannot vouch for them\n", unchained)
	}
	switch {
	case q.shadowDiff:
		type row struct {
			Tool     string `json:"tool"`
			Enforced string `json:"enforced"`
			Shadow   string `json:"shadow"`
			Hook     string `json:"hook"`
			Count    int    `json:"count"`
		}
		var rows []row
		for k, n := range shadow {
			rows = append(rows, row{k.Tool, k.Enforced, k.Shadow, k.By, n})
		}
		sort.Slice(rows, func(i, j int) bool {
			if rows[i].Count != rows[j].Count {
				return rows[i].Count > rows[j].Count
			}
			return rows[i].Tool < rows[j].Tool
		})
		if q.asJSON {
			return printJSON(g, rows)
		}
		tw := tabwriter.NewWriter(g.io.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TOOL\tENFORCED\tSHADOW\tSHADOW HOOK\tCOUNT")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", r.Tool, r.Enforced, r.Shadow, r.Hook, r.Count)
		}
		return tw.Flush()
	case q.stats:
		type row struct {
			Tool     string `json:"tool"`
			Decision string `json:"decision"`
			Caller   string `json:"caller"`
			Count    int    `json:"count"`
		}
		var rows []row
		for k, n := range counts {
			rows = append(rows, row{k.Tool, k.Decision, k.Caller, n})
		}
		sort.Slice(rows, func(i, j int) bool {
			a, b := rows[i], rows[j]
			if a.Count != b.Count {
				return a.Count > b.Count
			}
			return a.Tool+a.Decision+a.Caller < b.Tool+b.Decision+b.Caller
		})
		if q.asJSON {
			return printJSON(g, rows)
		}
		tw := tabwriter.NewWriter(g.io.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TOOL\tDECISION\tCALLER\tCOUNT")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", r.Tool, r.Decision, r.Caller, r.Count)
		}
		return tw.Flush()
	case tw != nil:
		return tw.Flush()
	}
	return nil
}

// toolName is server/tool, the name operators know from the config.
func toolName(e *ledger.Entry) string {
	if e.Server == "" {
		return e.Tool
	}
	return e.Server + "/" + e.Tool
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return strings.ReplaceAll(s, "\t", " ")
}
