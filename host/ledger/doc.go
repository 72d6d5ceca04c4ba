// Package ledger owns the format of the tamper-evident audit ledger: how
// a record is chained to the one before it, what is hashed and signed,
// the bookkeeping records the writer adds (ledger_start, ledger_continue,
// ledger_recovered, ledger_checkpoint, ledger_rotate, ledger_close), how
// the end of an existing ledger file is read back, and how a set of
// ledger files is verified.
//
// The chain, precisely: every chained line is a JSON object that ends in
// `,"seq":N,"prev":"H"}` where N counts records from 1 across all files
// of one ledger and H is the lowercase hex SHA-256 of the previous
// record's line, exactly the bytes stored in the file without the
// terminating newline (for seq 1, 64 zeros). So `sed -n Lp FILE | tr -d
// '\n' | sha256sum` reproduces the prev of line L+1 by hand. A signed
// checkpoint is an Ed25519 signature over
// "toolgate-ledger-checkpoint-v1\n<upto_seq>\n<hash of record upto_seq>\n".
//
// The package must not decide which events are recorded (host/events
// does) nor write files itself, except for the checks Verify reads. It
// never logs, and key material never appears in its errors.
package ledger
