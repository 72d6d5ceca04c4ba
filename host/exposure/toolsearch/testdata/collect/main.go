// Command collect regenerates the tool fixtures of the toolsearch quality
// test (testdata/everything.json, testdata/mcpdemo.json) from the real
// servers, so the test itself never needs node or a subprocess.
//
//	go build -o bin/mcp-demo ./testplugins/mcp-demo   # if not built yet
//	go run ./host/exposure/toolsearch/testdata/collect \
//	    -everything testplugins/interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js \
//	    -mcp-demo bin/mcp-demo -out host/exposure/toolsearch/testdata
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fixture is one server's tool list as the quality test reads it.
type fixture struct {
	Server       string        `json:"server"`
	Instructions string        `json:"instructions,omitempty"`
	Tools        []fixtureTool `json:"tools"`
}

type fixtureTool struct {
	Name        string   `json:"name"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Properties  []string `json:"properties,omitempty"`
}

func main() {
	everything := flag.String("everything", "", "path of server-everything's dist/index.js")
	demo := flag.String("mcp-demo", "", "path of the mcp-demo binary")
	out := flag.String("out", ".", "directory to write the fixtures to")
	flag.Parse()
	if *everything == "" || *demo == "" {
		fmt.Fprintln(os.Stderr, "collect: pass -everything and -mcp-demo")
		os.Exit(2)
	}
	if err := run(*everything, *demo, *out); err != nil {
		fmt.Fprintln(os.Stderr, "collect:", err)
		os.Exit(1)
	}
}

func run(everything, demo, out string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// server-everything adds its elicitation tools only after initialized,
	// and announces them with list_changed: wait for that announcement.
	ev, err := collect(ctx, "everything", exec.Command("node", everything, "stdio"), true)
	if err != nil {
		return err
	}
	if err := write(filepath.Join(out, "everything.json"), ev); err != nil {
		return err
	}
	// "files" matches the server name used in the examples
	// (mcp__files__write_file).
	dm, err := collect(ctx, "files", exec.Command(demo, "--tools", "200"), false)
	if err != nil {
		return err
	}
	return write(filepath.Join(out, "mcpdemo.json"), dm)
}

func collect(ctx context.Context, server string, cmd *exec.Cmd, awaitListChanged bool) (*fixture, error) {
	changed := make(chan struct{}, 1)
	// Advertise every client capability server-everything conditions a
	// tool on, so the fixture holds its whole tool list.
	client := mcp.NewClient(&mcp.Implementation{Name: "toolsearch-collect", Version: "0"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{
			RootsV2:     &mcp.RootCapabilities{ListChanged: true},
			Sampling:    &mcp.SamplingCapabilities{},
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return nil, fmt.Errorf("sampling is not supported by the collector")
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	sess, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", server, err)
	}
	defer sess.Close()
	if awaitListChanged {
		select {
		case <-changed:
		case <-time.After(5 * time.Second):
		}
	}
	f := &fixture{Server: server, Instructions: sess.InitializeResult().Instructions}
	for tool, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list tools of %s: %w", server, err)
		}
		ft := fixtureTool{Name: tool.Name, Title: tool.Title, Description: tool.Description}
		if tool.Annotations != nil && ft.Title == "" {
			ft.Title = tool.Annotations.Title
		}
		ft.Properties = propertyNames(tool.InputSchema)
		f.Tools = append(f.Tools, ft)
	}
	sort.Slice(f.Tools, func(i, j int) bool { return f.Tools[i].Name < f.Tools[j].Name })
	return f, nil
}

func propertyNames(schema any) []string {
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	var names []string
	for name := range s.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

func write(path string, f *fixture) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
