package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/toolgate/toolgate/internal/glob"
)

// ErrInvalidEdit is matched (errors.Is) when an edit would leave the
// configuration invalid; nothing was written. The error text holds the
// diagnostics.
var ErrInvalidEdit = errors.New("the edited configuration would not be valid")

// EditOptions are the inputs of AppendServers and RemoveServer.
type EditOptions struct {
	// LookupEnv is passed to Load when the edit is validated. Callers
	// that validate structure only may answer every variable.
	LookupEnv func(string) (string, bool)
}

// AppendServers appends text (server blocks in HCL) to file, one of the
// files the configuration at configPath (a file or directory) reads. The
// whole configuration is loaded with the edit in place first; when it has
// errors nothing is written and the error wraps ErrInvalidEdit.
// Everything already in the file is kept byte for byte.
func AppendServers(configPath, file string, text []byte, opts EditOptions) error {
	target, src, err := readForEdit(file)
	if err != nil {
		return err
	}
	nl := "\n"
	if bytes.Contains(src, []byte("\r\n")) {
		nl = "\r\n"
		text = bytes.ReplaceAll(bytes.ReplaceAll(text, []byte("\r\n"), []byte("\n")), []byte("\n"), []byte("\r\n"))
	}
	out := append([]byte(nil), src...)
	if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, nl...)
	}
	if len(bytes.TrimSpace(out)) > 0 {
		out = append(out, nl...)
	}
	out = append(out, text...)
	return validateAndWrite(configPath, target, out, opts)
}

// RemoveServer removes the server block name from the file that defines
// it, with the comment lines directly above it. The configuration is
// validated with the edit in place before anything is written.
func RemoveServer(configPath string, cfg *Config, name string, opts EditOptions) error {
	s, ok := cfg.Server(name)
	if !ok {
		return fmt.Errorf("no server %q in %s; toolgate mcp list shows the servers", name, strings.Join(cfg.Paths, ", "))
	}
	target, src, err := readForEdit(s.DeclRange.Filename)
	if err != nil {
		return err
	}
	f, diags := hclsyntax.ParseConfig(src, target, hcl.InitialPos)
	if diags.HasErrors() {
		return fmt.Errorf("%s does not parse: %s", target, diags.Error())
	}
	body := f.Body.(*hclsyntax.Body)
	var blk *hclsyntax.Block
	for _, b := range body.Blocks {
		if b.Type == "server" && len(b.Labels) == 1 && b.Labels[0] == name {
			blk = b
		}
	}
	if blk == nil {
		return fmt.Errorf("server %q is not a block of %s (was the file changed?); run the command again", name, target)
	}
	start := lineStart(src, blk.Range().Start.Byte)
	// The comment lines directly above describe the block.
	for start > 0 {
		prev := lineStart(src, start-1)
		line := strings.TrimSpace(string(src[prev:start]))
		if !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "//") {
			break
		}
		start = prev
	}
	end := blk.Range().End.Byte
	if i := bytes.IndexByte(src[end:], '\n'); i >= 0 && len(bytes.TrimSpace(src[end:end+i])) == 0 {
		end += i + 1
		// One blank line after the block goes with it.
		if j := bytes.IndexByte(src[end:], '\n'); j >= 0 && len(bytes.TrimSpace(src[end:end+j])) == 0 {
			end += j + 1
		}
	}
	if end == len(src) {
		// The last block: the blank lines that separated it go too.
		for start > 0 {
			prev := lineStart(src, start-1)
			if len(bytes.TrimSpace(src[prev:start])) != 0 {
				break
			}
			start = prev
		}
	}
	return validateAndWrite(configPath, target, splice(src, start, end, ""), opts)
}

// HooksMatching returns the names of hook plugins whose match blocks
// select server name, so that removing a server can say which hooks it
// leaves with nothing to match.
func HooksMatching(cfg *Config, name string) []string {
	var out []string
	for _, p := range cfg.Plugins {
		for _, m := range p.Match {
			if pat, err := glob.Compile(m.Server); err == nil && pat.Match(name) {
				out = append(out, p.Name)
				break
			}
		}
	}
	return out
}

func readForEdit(file string) (string, []byte, error) {
	target, err := filepath.EvalSymlinks(file)
	if errors.Is(err, os.ErrNotExist) {
		abs, aerr := filepath.Abs(file)
		if aerr != nil {
			return "", nil, aerr
		}
		return abs, nil, nil // a new file
	}
	if err != nil {
		return "", nil, fmt.Errorf("open %s: %w", file, unwrapPathError(err))
	}
	if err := ReadOnly(target); err != nil {
		return "", nil, fmt.Errorf("%w. toolgate cannot edit it; make it writable, or edit its source (for a ConfigMap, the manifest)", err)
	}
	src, err := os.ReadFile(target)
	if err != nil {
		return "", nil, fmt.Errorf("read %s: %w", target, unwrapPathError(err))
	}
	return target, src, nil
}

func validateAndWrite(configPath, target string, out []byte, opts EditOptions) error {
	// A new file outside a directory config is validated on its own.
	loadPath := configPath
	if info, err := os.Stat(configPath); err != nil || !info.IsDir() {
		loadPath = target
	}
	if _, err := os.Stat(target); errors.Is(err, os.ErrNotExist) {
		if info, serr := os.Stat(loadPath); serr == nil && info.IsDir() {
			return fmt.Errorf("%s does not exist yet; create it (empty) first, then run the command again", target)
		}
		// Load needs a file to list; an empty one stands in until the
		// content is known to be valid.
		if err := os.WriteFile(target, nil, 0o600); err != nil {
			return fmt.Errorf("create %s: %w", target, unwrapPathError(err))
		}
		ok := false
		defer func() {
			if !ok {
				_ = os.Remove(target)
			}
		}()
		if err := check(loadPath, target, out, opts); err != nil {
			return err
		}
		if err := writeFileAtomic(target, out, 0o600); err != nil {
			return err
		}
		ok = true
		return nil
	}
	if err := check(loadPath, target, out, opts); err != nil {
		return err
	}
	info, err := os.Stat(target)
	if err != nil {
		return fmt.Errorf("stat %s: %w", target, unwrapPathError(err))
	}
	return writeFileAtomic(target, out, info.Mode().Perm())
}

func check(loadPath, target string, out []byte, opts EditOptions) error {
	_, diags := Load(loadPath, LoadOptions{LookupEnv: opts.LookupEnv, Replace: map[string][]byte{target: out}})
	if diags.HasErrors() {
		var msgs []string
		for _, d := range diags.Errs() {
			msgs = append(msgs, d.Error())
		}
		return fmt.Errorf("%w (nothing was written): %s", ErrInvalidEdit, strings.Join(msgs, "; "))
	}
	return nil
}
