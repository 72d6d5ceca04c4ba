package sdkfloor

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Floor is one downstream server served over Streamable HTTP.
type Floor struct {
	cmd     *exec.Cmd
	session *mcp.ClientSession
	server  *mcp.Server
	handler http.Handler
}

// Start runs argv as a stdio MCP server, initializes it and lists its
// tools. Close stops it.
func Start(ctx context.Context, argv []string) (*Floor, error) {
	if len(argv) == 0 {
		return nil, errors.New("sdkfloor: no server command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	f := &Floor{cmd: cmd}
	client := mcp.NewClient(&mcp.Implementation{Name: "sdk-floor", Version: "1"}, nil)
	// The protocol version toolgate's client speaks to a server first
	// (mcpclient.LegacyVersion): a 2026-07-28 session answers every call
	// with more (resultType, serverInfo in _meta), which would make the
	// floor and toolgate do different work.
	f.session, err = client.Connect(ctx, &stdio{w: in, r: out}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("initializing %s: %w", argv[0], err)
	}
	tools, err := f.session.ListTools(ctx, nil)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("listing the tools of %s: %w", argv[0], err)
	}
	f.server = mcp.NewServer(&mcp.Implementation{Name: "sdk-floor", Version: "1"}, nil)
	for _, t := range tools.Tools {
		f.server.AddTool(t, f.forward)
	}
	f.handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.server }, nil)
	return f, nil
}

// Handler serves the tools over Streamable HTTP.
func (f *Floor) Handler() http.Handler { return f.handler }

// forward is the one tool handler: the call goes on as it came.
func (f *Floor) forward(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return f.session.CallTool(ctx, &mcp.CallToolParams{Name: req.Params.Name, Arguments: req.Params.Arguments})
}

// Close ends the session (the server exits on end of input) and waits
// for the server.
func (f *Floor) Close() error {
	if f.session != nil {
		_ = f.session.Close()
	}
	return f.cmd.Wait()
}

// stdio is newline-delimited JSON-RPC over a process's pipes, read on
// the caller's goroutine: go-sdk's CommandTransport reads on a goroutine
// of its own and hands each message over a channel, which toolgate's
// transport does not, so the floor must not either.
type stdio struct {
	w io.WriteCloser
	r io.ReadCloser
}

func (s *stdio) Connect(context.Context) (mcp.Connection, error) {
	return &stdioConn{w: s.w, r: bufio.NewReaderSize(s.r, 64<<10), rc: s.r}, nil
}

type stdioConn struct {
	wmu       sync.Mutex
	w         io.WriteCloser
	r         *bufio.Reader
	rc        io.Closer
	closeOnce sync.Once
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		line, err := c.r.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			return jsonrpc.DecodeMessage(line)
		}
	}
}

func (c *stdioConn) Write(_ context.Context, msg jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.w.Write(append(b, '\n'))
	return err
}

func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		_ = c.w.Close()
		_ = c.rc.Close()
	})
	return nil
}

func (c *stdioConn) SessionID() string { return "" }
