# toolgate config used by the RememberToolApproval golden test.
# Layout below is deliberately not canonical: the writer must keep it.

approval {
  policy = "on-request"   # ask when needed
}

/* The files server: a local demo. */
server "files" {
  command = "bin/mcp-demo"      # relative to this file
  args    = ["--root", "."]

  // per-tool overrides
  tool "write_file" {
    approval_mode = "prompt"    # was: ask every time
  }
  tool "read_file" { approval_mode = "auto" }
  tool "stat" {}
}

server "github" {
    url = "https://example.invalid/mcp"
    bearer_token_env_var="GITHUB_TOKEN"
}

server "tiny" { command = "mcp-tiny" }

# trailing comment, kept
