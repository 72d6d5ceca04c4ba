// Package reload decides when the configuration is read again: on SIGHUP,
// and, when watching is on, when a configuration file changes on disk.
//
// It owns only the triggers and their debouncing. It must not load,
// validate or apply configuration: it calls the function it is given,
// which does that (and keeps the running configuration when the new one
// is invalid).
//
// Files are watched through github.com/fsnotify/fsnotify, one watch on the
// directory so that editors replacing a file by rename are seen on every
// OS. Windows has no SIGHUP, so there only file changes trigger a reload.
package reload
