package mcpclient

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// envelopeSlack is what a response adds around its result (jsonrpc, id,
// the member names): a result of exactly MaxResultBytes still fits.
const envelopeSlack = 4 << 10

// maxDiscardedAnswer bounds how much of a refused answer is read past the
// cap to find its end. A line longer still ends the connection, as any
// message past maxStdioMessage did before.
const maxDiscardedAnswer = 1 << 30

// ResultTooLargeError is the error of a tools/call whose answer was
// larger than Options.MaxResultBytes: toolgate stopped keeping its bytes
// once past the cap and never decoded it. The session stays up.
type ResultTooLargeError struct {
	Bytes int64 // the answer's size as read (at least Limit)
	Limit int
}

func (e *ResultTooLargeError) Error() string {
	return fmt.Sprintf("the server's answer is %d bytes of JSON, more than toolgate reads for one tool result (max_result_bytes = %d). "+
		"The tool ran; only its result was refused, before it was decoded. Call it for less (a smaller range, page or limit), "+
		"or raise max_result_bytes in the serve block of the toolgate configuration", e.Bytes, e.Limit)
}

// oversizedAnswer is what readLine returns for a tools/call answer past
// the cap: the id to fail and the size read.
type oversizedAnswer struct {
	id   jsonrpc.ID
	size int64
}

func (o *oversizedAnswer) Error() string { return "oversized answer" }

// resultCap is the line size past which a tools/call answer is refused;
// 0: no cap of its own.
func (c *stdioConn) resultCap() int {
	if c.maxResult <= 0 {
		return 0
	}
	return c.maxResult + envelopeSlack
}

// refuseIfCall decides, once a line passed resultCap, whether it is the
// answer to a tools/call in flight (its id is read from head, the start
// of the line, where servers write it). If so it reads the rest of the
// line without keeping it and returns an *oversizedAnswer; otherwise nil,
// and the caller keeps reading as before.
func (c *stdioConn) refuseIfCall(head []byte, size int) error {
	id, ok := headID(head)
	if !ok {
		return nil
	}
	if _, calling := c.calling.Load(id); !calling {
		return nil
	}
	total := int64(size)
	for total <= maxDiscardedAnswer {
		line, err := c.r.ReadSlice('\n')
		total += int64(len(line))
		if err == nil {
			c.calling.Delete(id)
			return &oversizedAnswer{id: id, size: total - int64(trailingNewline([][]byte{line}))}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err // the server closed its stdout mid-answer
		}
	}
	return fmt.Errorf("reading from the server: a message exceeds %d bytes", maxDiscardedAnswer)
}

// headID reads the top-level "id" of a response from the start of its
// line, as long as it comes before the "result" (which go-sdk, the
// TypeScript and the Python SDKs all write after it).
func headID(head []byte) (jsonrpc.ID, bool) {
	i := skipSpace(head, 0)
	if i >= len(head) || head[i] != '{' {
		return jsonrpc.ID{}, false
	}
	i = skipSpace(head, i+1)
	for i < len(head) && head[i] == '"' {
		end := stringEnd(head, i)
		key := string(head[i+1 : max(end-1, i+1)])
		i = skipSpace(head, end)
		if i >= len(head) || head[i] != ':' {
			return jsonrpc.ID{}, false
		}
		i = skipSpace(head, i+1)
		if i >= len(head) {
			return jsonrpc.ID{}, false
		}
		switch key {
		case "result", "error", "method", "params":
			return jsonrpc.ID{}, false
		}
		vend, _ := valueEnd(head, i)
		if vend >= len(head) {
			return jsonrpc.ID{}, false
		}
		if key == "id" {
			var raw any
			if json.Unmarshal(head[i:vend], &raw) != nil {
				return jsonrpc.ID{}, false
			}
			id, err := jsonrpc.MakeID(raw)
			return id, err == nil && id.IsValid()
		}
		i = skipSpace(head, vend)
		if i >= len(head) || head[i] != ',' {
			return jsonrpc.ID{}, false
		}
		i = skipSpace(head, i+1)
	}
	return jsonrpc.ID{}, false
}
