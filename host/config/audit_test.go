package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAuditLedgerSettings(t *testing.T) {
	cfg, dir := mustLoad(t, `
audit {
  path = "audit.jsonl"
  rotate {
    max_bytes = 1048576
    max_age   = "24h"
  }
  signing {
    key_file         = "ledger.key"
    checkpoint_every = 50
  }
}
`, nil)
	if cfg.AuditRotate != (AuditRotate{MaxBytes: 1 << 20, MaxAge: 24 * time.Hour}) {
		t.Errorf("rotate = %+v", cfg.AuditRotate)
	}
	if cfg.AuditSigning != (AuditSigning{KeyFile: filepath.Join(dir, "ledger.key"), CheckpointEvery: 50}) {
		t.Errorf("signing = %+v", cfg.AuditSigning)
	}
	cfg, _ = mustLoad(t, `audit {
  path = "a.jsonl"
  signing { key_env = "TOOLGATE_AUDIT_KEY" }
}`, nil)
	if cfg.AuditSigning.KeyEnv != "TOOLGATE_AUDIT_KEY" || cfg.AuditSigning.CheckpointEvery != DefaultCheckpointEvery {
		t.Errorf("signing = %+v", cfg.AuditSigning)
	}
	for _, bad := range []struct{ src, want string }{
		{`audit {
  path = "a.jsonl"
  signing {
    key_file = "k"
    key_env  = "K"
  }
}`, "not both"},
		{`audit {
  path = "a.jsonl"
  signing {}
}`, "key_file"},
		{`audit {
  path = "a.jsonl"
  rotate { max_bytes = 10 }
}`, "between 4096"},
	} {
		_, diags, _ := loadString(t, bad.src, nil)
		if !diags.HasErrors() || !strings.Contains(diags.Error(), bad.want) {
			t.Errorf("%s: diags = %v, want %q", bad.src, diags, bad.want)
		}
	}
}

func TestShadowModeOnHooks(t *testing.T) {
	cfg, _ := mustLoad(t, `plugin "p" {
  kind = "hook"
  path = "p"
  mode = "shadow"
}
plugin "q" {
  kind = "hook"
  path = "q"
}`, nil)
	if !cfg.Plugins[0].Shadow || cfg.Plugins[1].Shadow {
		t.Errorf("shadow = %v, %v; want true, false", cfg.Plugins[0].Shadow, cfg.Plugins[1].Shadow)
	}
	for src, want := range map[string]string{
		`plugin "g" {
  kind = "guardian"
  path = "g"
  mode = "shadow"
}`: "Shadow mode is for hooks",
		`plugin "h" {
  kind = "hook"
  path = "h"
  mode = "observe"
}`: `"enforce" or "shadow"`,
	} {
		_, diags, _ := loadString(t, src, nil)
		if !diags.HasErrors() || !strings.Contains(diags.Error(), want) {
			t.Errorf("%s: %v, want %q", src, diags, want)
		}
	}
}
