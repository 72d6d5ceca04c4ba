package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// evalContext is what expressions in one file may call. There are no
// variables: the config is data, and only env() and file() reach outside.
// dir is the file's directory, against which file() resolves.
func evalContext(dir string, lookupEnv func(string) (string, bool)) *hcl.EvalContext {
	return &hcl.EvalContext{
		Functions: map[string]function.Function{
			"env":       envFunc(lookupEnv),
			"file":      fileFunc(dir),
			"trimspace": stdlib.TrimSpaceFunc,
			"join":      stdlib.JoinFunc,
			"format":    stdlib.FormatFunc,
			"lower":     stdlib.LowerFunc,
			"upper":     stdlib.UpperFunc,
			"coalesce":  stdlib.CoalesceFunc,
		},
	}
}

// envFunc is env("NAME") or env("NAME", "default"). The error texts name
// the variable, never a value.
func envFunc(lookupEnv func(string) (string, bool)) function.Function {
	return function.New(&function.Spec{
		Description: "Returns the value of an environment variable, or the default when it is not set.",
		Params:      []function.Parameter{{Name: "name", Type: cty.String}},
		VarParam:    &function.Parameter{Name: "default", Type: cty.String},
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			name := args[0].AsString()
			if len(args) > 2 {
				return cty.NilVal, function.NewArgErrorf(2, "env takes a name and at most one default")
			}
			if v, ok := lookupEnv(name); ok {
				return cty.StringVal(v), nil
			}
			if len(args) == 2 {
				return args[1], nil
			}
			return cty.NilVal, fmt.Errorf("environment variable %q is not set", name)
		},
	})
}

// maxFileFuncBytes bounds file(): it is meant for tokens and small
// snippets, and a mistaken path to a large file should fail, not load it.
const maxFileFuncBytes = 1 << 20

// fileFunc is file("path"), relative to the config file's directory.
func fileFunc(dir string) function.Function {
	return function.New(&function.Spec{
		Description: "Returns the contents of a file, resolved relative to the config file.",
		Params:      []function.Parameter{{Name: "path", Type: cty.String}},
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			p := args[0].AsString()
			abs := p
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(dir, p)
			}
			info, err := os.Stat(abs)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				return cty.NilVal, fmt.Errorf("no file exists at %s (relative paths are resolved against %s)", abs, dir)
			case err != nil:
				return cty.NilVal, fmt.Errorf("read %s: %w", abs, err)
			case info.IsDir():
				return cty.NilVal, fmt.Errorf("%s is a directory, not a file", abs)
			case info.Size() > maxFileFuncBytes:
				return cty.NilVal, fmt.Errorf("%s is larger than %d bytes; file() is for small values such as tokens", abs, maxFileFuncBytes)
			}
			b, err := os.ReadFile(abs)
			if err != nil {
				return cty.NilVal, fmt.Errorf("read %s: %w", abs, err)
			}
			if !utf8.Valid(b) {
				return cty.NilVal, fmt.Errorf("%s is not valid UTF-8 text", abs)
			}
			return cty.StringVal(string(b)), nil
		},
	})
}
