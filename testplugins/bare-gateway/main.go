// Command bare-gateway is a measuring stick, not a gateway: the least any
// MCP gateway must do to put a stdio server behind Streamable HTTP. It
// starts the server, initializes it once, and forwards each tools/call's
// params untouched, rewriting only the JSON-RPC id; it answers
// initialize itself, accepts notifications and refuses GET. No approval,
// no schemas, no progress, cancellation or sessions: nothing a real
// gateway must add.
//
// host/gateway's benchmarks run it beside `toolgate serve` in the same
// run, so what the hardware and the downstream server allow a gateway on
// the machine at hand is measured, not argued (docs/performance.md).
//
//	bare-gateway --http 127.0.0.1:0 -- mcp-demo --name demo
//
// It prints "listening on http://ADDR/mcp" to stderr once it is ready.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/internal/contain"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bare-gateway:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("http", "127.0.0.1:0", "address to listen on")
	flag.Parse()
	if flag.NArg() == 0 {
		return errors.New("usage: bare-gateway [--http ADDR] -- SERVER [ARGS...]")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	// The server dies with us as toolgate's do (internal/contain: its
	// process group and cell, Pdeathsig on Linux, a Job Object on
	// Windows); that costs nothing per call, which is what is measured.
	cell, _ := contain.Default().NewCell("server")
	proc, err := cell.Start(cmd, contain.StartOptions{CloseStdin: in.Close})
	if err != nil {
		return err
	}
	// stdin EOF is a stdio server's signal to exit.
	defer func() { _ = proc.Stop(context.Background(), 2*time.Second, 2*time.Second) }()
	d := &downstream{w: in, pending: map[int64]chan reply{}}
	go d.read(out)
	if _, err := d.call("initialize", json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bare-gateway","version":"1"}}`)); err != nil {
		return fmt.Errorf("initializing %s: %w", flag.Arg(0), err)
	}
	if err := d.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		return err
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(d.serveHTTP)}
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown(context.Background())
	}()
	fmt.Fprintf(os.Stderr, "listening on http://%s/mcp\n", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// reply is the downstream answer to one call: its result or error, raw.
type reply struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

type downstream struct {
	wmu  sync.Mutex
	w    io.Writer
	next atomic.Int64

	mu      sync.Mutex
	pending map[int64]chan reply
}

func (d *downstream) send(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	d.wmu.Lock()
	defer d.wmu.Unlock()
	_, err = d.w.Write(append(b, '\n'))
	return err
}

func (d *downstream) call(method string, params json.RawMessage) (reply, error) {
	id := d.next.Add(1)
	ch := make(chan reply, 1)
	d.mu.Lock()
	d.pending[id] = ch
	d.mu.Unlock()
	if err := d.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return reply{}, err
	}
	r, ok := <-ch
	if !ok {
		return reply{}, errors.New("the server exited")
	}
	return r, nil
}

// read routes each response line to its caller; other lines are dropped.
func (d *downstream) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var m struct {
			ID json.RawMessage `json:"id"`
			reply
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		id, err := strconv.ParseInt(string(m.ID), 10, 64)
		if err != nil {
			continue
		}
		d.mu.Lock()
		ch := d.pending[id]
		delete(d.pending, id)
		d.mu.Unlock()
		if ch != nil {
			ch <- m.reply
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for id, ch := range d.pending {
		close(ch)
		delete(d.pending, id)
	}
}

func (d *downstream) serveHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
	case http.MethodDelete:
		return
	default: // no server-to-client stream
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if req.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var rep reply
	switch req.Method {
	case "initialize":
		w.Header().Set("Mcp-Session-Id", "bare")
		rep.Result = json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bare-gateway","version":"1"}}`)
	case "tools/call":
		var err error
		if rep, err = d.call(req.Method, req.Params); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
	default:
		rep.Error = json.RawMessage(`{"code":-32601,"message":"bare-gateway forwards only tools/call"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		reply
	}{"2.0", req.ID, rep})
}
