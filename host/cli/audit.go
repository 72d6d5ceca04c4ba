package cli

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/host/ledger"
)

func newAuditCmd(g *globals) *cobra.Command {
	q := &auditQuery{}
	cmd := &cobra.Command{
		Use:   "audit [FILE...]",
		Short: "List, filter and count audit ledger records; verify the ledger",
		Long: `audit reads the audit ledger (the files given, or the configured audit log and
the files rotated from it) as a stream: no database. Filters combine with AND.
Old, unchained audit logs are read too.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := g.auditFiles(args)
			if err != nil {
				return err
			}
			return q.run(g, files)
		},
	}
	q.flags(cmd)
	cmd.AddCommand(newAuditVerifyCmd(g), newAuditKeygenCmd(g))
	return cmd
}

// auditFiles returns the ledger files named on the command line, or the
// configured audit log with the files rotated from it, oldest first.
func (g *globals) auditFiles(args []string) ([]string, error) {
	if len(args) > 0 {
		return args, nil
	}
	cfg, err := g.loadConfig()
	if err != nil {
		return nil, err
	}
	if cfg.AuditLog == "" {
		return nil, exit(ExitUsage, errors.New("no audit log is configured: name the ledger files, or set audit { path } in the configuration"))
	}
	return RotatedFiles(cfg.AuditLog), nil
}

// RotatedFiles is the audit log at path preceded by the files rotated
// from it (<name>-<UTC time>.<ext>), oldest first.
func RotatedFiles(path string) []string {
	ext := filepath.Ext(path)
	rotated, _ := filepath.Glob(strings.TrimSuffix(path, ext) + "-*" + ext)
	sort.Strings(rotated) // the UTC stamps sort in time order
	if _, err := os.Stat(path); err == nil {
		rotated = append(rotated, path)
	}
	return rotated
}

func newAuditVerifyCmd(g *globals) *cobra.Command {
	var keyFile string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "verify [FILE...]",
		Short: "Check the ledger's hash chain (and signed checkpoints with --key); exit 1 names the first broken record",
		Long: `verify checks that no record of the ledger was edited, deleted, reordered or cut
short: every record's prev must be the SHA-256 of the line before it, and seq
must count up across the files given (in any order; rotated files continue
one chain). With --key, every signed checkpoint must verify with that key.
Exit status 0 when intact, 1 at the first broken record (file:line, seq, why),
or when the files are an old unchained audit log that proves nothing.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := g.auditFiles(args)
			if err != nil {
				return err
			}
			var key ed25519.PublicKey
			if keyFile != "" {
				data, err := os.ReadFile(keyFile)
				if err != nil {
					return exit(ExitUsage, fmt.Errorf("read --key: %w", err))
				}
				if key, err = ledger.ParseVerifyKey(data); err != nil {
					return exit(ExitUsage, fmt.Errorf("--key %s: %w", keyFile, err))
				}
			}
			rep, err := ledger.Verify(files, key)
			if errors.Is(err, ledger.ErrUnchained) {
				return exit(ExitFailure, fmt.Errorf("%s: %w", strings.Join(files, ", "), err))
			}
			if err != nil {
				return exit(ExitFailure, err)
			}
			if asJSON {
				if err := printJSON(g, verifyJSON(rep)); err != nil {
					return err
				}
				if rep.Break != nil {
					return exit(ExitFailure, nil)
				}
				return nil
			}
			if rep.Break != nil {
				return exit(ExitFailure, fmt.Errorf("ledger broken at %v", rep.Break))
			}
			signed := "checkpoints not checked"
			if rep.Signed {
				signed = fmt.Sprintf("%d signed checkpoint(s) verified with key %s", rep.Checkpoints, ledger.KeyID(key))
			} else if rep.Checkpoints == 0 {
				signed = "no signed checkpoints"
			}
			fmt.Fprintf(g.io.Out, "intact: %d record(s), seq %d-%d in %d file(s); %s\n",
				rep.Records, rep.First.Seq, rep.Last.Seq, len(rep.Files), signed)
			for _, n := range rep.Notes {
				fmt.Fprintln(g.io.Out, "note:", n)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&keyFile, "key", "", "public key (PEM) to verify signed checkpoints with")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

func verifyJSON(r *ledger.Report) any {
	type brk struct {
		File   string `json:"file"`
		Line   int    `json:"line"`
		Seq    uint64 `json:"seq,omitempty"`
		Reason string `json:"reason"`
	}
	out := struct {
		Intact      bool     `json:"intact"`
		Files       []string `json:"files"`
		Records     uint64   `json:"records"`
		Unchained   int      `json:"unchained,omitempty"`
		FirstSeq    uint64   `json:"first_seq"`
		LastSeq     uint64   `json:"last_seq"`
		Checkpoints int      `json:"checkpoints"`
		Signed      bool     `json:"signed"`
		Closed      bool     `json:"closed"`
		Notes       []string `json:"notes,omitempty"`
		Break       *brk     `json:"break,omitempty"`
	}{Intact: r.Break == nil, Files: r.Files, Records: r.Records, Unchained: r.Unchained, FirstSeq: r.First.Seq,
		LastSeq: r.Last.Seq, Checkpoints: r.Checkpoints, Signed: r.Signed, Closed: r.Closed, Notes: r.Notes}
	if r.Break != nil {
		out.Break = &brk{r.Break.File, r.Break.Line, r.Break.Seq, r.Break.Reason}
	}
	return out
}

func newAuditKeygenCmd(g *globals) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "keygen --out FILE",
		Short: "Create an Ed25519 key for signing ledger checkpoints; prints the public key",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return exit(ExitUsage, errors.New("--out FILE is required: where to write the private key (mode 0600)"))
			}
			pub, priv, err := ed25519.GenerateKey(rand.Reader)
			if err != nil {
				return err
			}
			privPEM, err := ledger.MarshalPrivate(priv)
			if err != nil {
				return err
			}
			f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return exit(ExitFailure, fmt.Errorf("write the key: %w (keygen never overwrites a key)", err))
			}
			if _, err := f.Write(privPEM); err != nil {
				f.Close()
				return exit(ExitFailure, fmt.Errorf("write the key: %w", err))
			}
			if err := f.Close(); err != nil {
				return exit(ExitFailure, fmt.Errorf("write the key: %w", err))
			}
			pubPEM, err := ledger.MarshalPublic(pub)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.io.Err, "private key written to %s (key id %s); configure audit { signing { key_file = %q } }.\nThe public key, for `toolgate audit verify --key`:\n", out, ledger.KeyID(pub), out)
			_, err = g.io.Out.Write(pubPEM)
			return err
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "file to write the private key to (created, mode 0600)")
	return cmd
}
