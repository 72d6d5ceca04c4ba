// Command toolgate-hook-policy is toolgate's declarative policy hook: allow /
// deny / ask rules over servers, tools, annotations and argument values,
// written in the plugin block's config {}. See README.md for the rules and
// package github.com/toolgate/toolgate/plugins/hooks/internal/policy for the
// implementation; this package only serves it.
//
// It is a go-plugin binary started by the toolgate host; run by hand it
// explains that and exits.
package main
