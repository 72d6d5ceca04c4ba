package hostlist

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// List is a parsed list of hosts.
type List struct {
	exact    map[string]bool
	suffixes []string // ".example.com" for "*.example.com"
}

// Parse validates entries and returns the list. The error names the first
// bad entry and its index.
func Parse(entries []string) (List, error) {
	l := List{exact: make(map[string]bool, len(entries))}
	for i, entry := range entries {
		host := normalize(entry)
		wildcard := strings.HasPrefix(host, "*.")
		name := strings.TrimPrefix(host, "*.")
		if name == "" || strings.ContainsAny(name, "/:*?@ \t") && net.ParseIP(strings.Trim(name, "[]")) == nil {
			return List{}, fmt.Errorf("entry %d (%q) is not a host name: write a bare host such as \"example.com\" or \"*.example.com\", without scheme, port or path", i, entry)
		}
		if wildcard {
			l.suffixes = append(l.suffixes, "."+name)
			continue
		}
		l.exact[strings.Trim(name, "[]")] = true
	}
	return l, nil
}

// Contains reports whether host (as returned by [HostOf]) is on the list.
func (l List) Contains(host string) bool {
	host = strings.Trim(normalize(host), "[]")
	if l.exact[host] {
		return true
	}
	for _, suffix := range l.suffixes {
		if strings.HasSuffix(host, suffix) {
			return true
		}
	}
	return false
}

// HostOf returns the host a value points at: the host of a URL
// ("https://api.example.com/v1" → "api.example.com"), of a scheme-less
// "host/path" or "host:port", or a bare host. It returns false when value
// names no host at all (empty, or a URL without one such as "file:///x").
func HostOf(value string) (string, bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return "", false
	}
	if !strings.Contains(value, "://") {
		value = "//" + value
	}
	u, err := url.Parse(value)
	if err != nil {
		return "", false
	}
	host := normalize(u.Hostname())
	return host, host != ""
}

// URLHost returns the host of value when value is an absolute URL with a
// host ("scheme://host..."), for scanners that must not mistake every word
// for a host name.
func URLHost(value string) (string, bool) {
	i := strings.Index(value, "://")
	if i <= 0 || strings.ContainsAny(value[:i], " \t\n/\"'") {
		return "", false
	}
	u, err := url.Parse(strings.TrimSpace(value))
	if err != nil || u.Host == "" {
		return "", false
	}
	host := normalize(u.Hostname())
	return host, host != ""
}

func normalize(host string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(host)), ".")
}
