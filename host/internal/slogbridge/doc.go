// Package slogbridge lets go-sdk, which logs through log/slog, log into the
// host's hclog tree, so SDK internals (dropped tools, keepalive failures,
// transport retries) appear under the server or session they concern.
//
// It owns only the translation of levels and attributes; it must not
// filter, buffer or reformat messages beyond what hclog needs.
package slogbridge
