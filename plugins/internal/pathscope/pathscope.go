package pathscope

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxSymlinks bounds the symlinks followed while resolving one path, like the
// kernel's ELOOP limit, so that a symlink loop ends with an error.
const maxSymlinks = 40

// ErrRelative means a relative path was given without a base directory to
// resolve it against. Callers treat such a path as outside every directory.
var ErrRelative = errors.New("relative path without a base directory")

// Resolve returns the absolute form of p with every existing symlink in it
// resolved and every "." and ".." applied. A relative p is taken relative to
// base, which is resolved the same way; "~" and "~/..." are taken relative to
// home when home is not empty; a file:// URL is reduced to its path.
func Resolve(p, base, home string) (string, error) {
	if strings.HasPrefix(p, "file://") {
		u, err := url.Parse(p)
		if err != nil {
			return "", fmt.Errorf("parse file URL: %w", err)
		}
		p = u.Path
	}
	if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		p = home + p[1:]
	}
	if p == "" {
		return "", errors.New("resolve path: empty path")
	}
	if !filepath.IsAbs(p) {
		if base == "" || !filepath.IsAbs(base) {
			return "", fmt.Errorf("resolve path %q: %w", p, ErrRelative)
		}
		p = base + string(filepath.Separator) + p
	}
	return resolveAbsolute(p)
}

// resolveAbsolute resolves an absolute path component by component.
func resolveAbsolute(p string) (string, error) {
	rest := components(p)
	resolved := string(filepath.Separator)
	missing := false // once a component is missing, nothing below it exists
	links := 0
	for len(rest) > 0 {
		part := rest[0]
		rest = rest[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, part)
		if missing {
			resolved = next
			continue
		}
		info, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			missing = true
			resolved = next
			continue
		case err != nil:
			return "", fmt.Errorf("resolve path %q: %w", p, err)
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		links++
		if links > maxSymlinks {
			return "", fmt.Errorf("resolve path %q: more than %d symlinks (a loop?)", p, maxSymlinks)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("resolve path %q: %w", p, err)
		}
		if filepath.IsAbs(target) {
			resolved = string(filepath.Separator)
		}
		rest = append(components(target), rest...)
	}
	return resolved, nil
}

func components(p string) []string {
	return strings.Split(p, string(filepath.Separator))
}

// Within reports whether path is dir or lies below it. Both must already be
// resolved (see [Resolve]); Within compares them lexically.
func Within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
