package sdk

// Regenerates internal/pb from proto/ with the pinned generators (installed
// into bin/tools on first use). See scripts/genproto.sh.
//go:generate bash scripts/genproto.sh
