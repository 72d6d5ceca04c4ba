package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// ErrNoConfig is returned by [Discover] when no config exists in any of
// the places it looks. The error text lists them; a command line front end
// should print it and exit non-zero (there is nothing to run without a
// config).
var ErrNoConfig = errors.New("no toolgate config found")

// EnvConfig is the environment variable [Discover] reads after --config.
const EnvConfig = "TOOLGATE_CONFIG"

// Discover picks the config to load, first match wins:
//
//  1. flag (the --config value), when not empty;
//  2. $TOOLGATE_CONFIG, when set and not empty;
//  3. ./toolgate.hcl;
//  4. <user config dir>/toolgate/config.hcl, where the user config dir is
//     $XDG_CONFIG_HOME or ~/.config on Unix, ~/Library/Application Support
//     on macOS and %AppData% on Windows.
//
// An explicit choice (1 or 2) that does not exist is an error rather than
// a reason to look further: silently loading another file would surprise.
// The result may be a file or a directory; pass it to [Load].
// lookupEnv nil means os.LookupEnv.
func Discover(flag string, lookupEnv func(string) (string, bool)) (string, error) {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	if flag != "" {
		return explicitConfig(flag, "--config")
	}
	if v, ok := lookupEnv(EnvConfig); ok && v != "" {
		return explicitConfig(v, "$"+EnvConfig)
	}

	looked := []string{"--config (not given)", "$" + EnvConfig + " (not set)"}
	if cwd, err := os.Getwd(); err == nil {
		p := filepath.Join(cwd, "toolgate.hcl")
		if isRegularFile(p) {
			return p, nil
		}
		looked = append(looked, p)
	}
	if dir, err := userConfigDir(lookupEnv); err == nil {
		p := filepath.Join(dir, "toolgate", "config.hcl")
		if isRegularFile(p) {
			return p, nil
		}
		looked = append(looked, p)
	} else {
		looked = append(looked, fmt.Sprintf("the user config directory (%v)", err))
	}
	return "", fmt.Errorf("find config: %w; looked at %s. To start, copy config.hcl.example to ./toolgate.hcl, or pass --config PATH",
		ErrNoConfig, strings.Join(looked, ", "))
}

func explicitConfig(p, source string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("find config: resolve %s from %s: %w", p, source, err)
	}
	if _, err := os.Stat(abs); err != nil {
		return "", fmt.Errorf("find config: %s (from %s) cannot be read: %w. Fix the path, or unset %s to use the default locations",
			abs, source, unwrapPathError(err), source)
	}
	return abs, nil
}

func isRegularFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// userConfigDir is os.UserConfigDir reading the environment through
// lookupEnv, so tests (and Load's single environment read) control it.
func userConfigDir(lookupEnv func(string) (string, bool)) (string, error) {
	get := func(name string) string {
		v, _ := lookupEnv(name)
		return v
	}
	switch runtime.GOOS {
	case "windows":
		if dir := get("AppData"); dir != "" {
			return dir, nil
		}
		return "", errors.New("%AppData% is not set")
	case "darwin", "ios":
		if home := get("HOME"); home != "" {
			return filepath.Join(home, "Library", "Application Support"), nil
		}
		return "", errors.New("$HOME is not set")
	case "plan9":
		if home := get("home"); home != "" {
			return filepath.Join(home, "lib"), nil
		}
		return "", errors.New("$home is not set")
	}
	if dir := get("XDG_CONFIG_HOME"); dir != "" {
		if !filepath.IsAbs(dir) {
			return "", errors.New("$XDG_CONFIG_HOME is not an absolute path")
		}
		return dir, nil
	}
	if home := get("HOME"); home != "" {
		return filepath.Join(home, ".config"), nil
	}
	return "", errors.New("neither $XDG_CONFIG_HOME nor $HOME is set")
}
