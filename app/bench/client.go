package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/sandtray/sandtray/serve/socket"
)

// protocolVersion is the MCP revision the client asks for.
const protocolVersion = "2025-06-18"

// client is a minimal MCP client speaking newline-delimited JSON-RPC on the
// socket, as sandtray-mcp's clients do. It adds next to nothing to what it
// measures, and no dependency. Calls on one client are sequential.
type client struct {
	conn net.Conn
	in   *bufio.Reader
	next int
}

// dial connects to the socket and completes the MCP handshake.
func dial(ctx context.Context, path, name string) (*client, error) {
	conn, err := socket.Dial(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", path, err)
	}
	c := &client{conn: conn, in: bufio.NewReaderSize(conn, 64<<10)}
	init := map[string]any{"protocolVersion": protocolVersion, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": name, "version": "1.0"}}
	if _, err := c.request(ctx, "initialize", init); err != nil {
		conn.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if err := c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		conn.Close()
		return nil, err
	}
	return c, nil
}

func (c *client) close() error { return c.conn.Close() }

// toolResult is the part of a tools/call result the bench reads.
type toolResult struct {
	IsError           bool           `json:"isError"`
	StructuredContent map[string]any `json:"structuredContent"`
	Content           []struct {
		Text string `json:"text"`
	} `json:"content"`
}

// call calls a tool and returns its structured result; a tool error is an
// error carrying the tool's text.
func (c *client) call(ctx context.Context, tool string, args map[string]any) (map[string]any, error) {
	return callTool(ctx, c.request, tool, args)
}

// callTool calls a tool through request, whichever transport sends it, and
// returns its structured result; a tool error is an error carrying the
// tool's text.
func callTool(ctx context.Context, request func(context.Context, string, any) (json.RawMessage, error), tool string, args map[string]any) (map[string]any, error) {
	raw, err := request(ctx, "tools/call", map[string]any{"name": tool, "arguments": args})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	var res toolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("%s: decode result: %w", tool, err)
	}
	if res.IsError {
		var text []string
		for _, part := range res.Content {
			text = append(text, part.Text)
		}
		return nil, fmt.Errorf("%s: tool error: %s", tool, strings.Join(text, " "))
	}
	return res.StructuredContent, nil
}

// request sends one request and waits for its response, skipping the
// notifications the server sends in between.
func (c *client) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	c.next++
	id := strconv.Itoa(c.next)
	if err := c.send(map[string]any{"jsonrpc": "2.0", "id": c.next, "method": method, "params": params}); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { c.conn.SetReadDeadline(time.Now()) })
	defer stop()
	for {
		line, err := c.in.ReadBytes('\n')
		if err != nil {
			return nil, errors.Join(ctx.Err(), fmt.Errorf("read reply: %w", err))
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &msg); err != nil {
			return nil, fmt.Errorf("reply is not JSON: %w", err)
		}
		if string(msg.ID) != id {
			continue // a notification, or a request from the server
		}
		if msg.Error != nil {
			return nil, fmt.Errorf("JSON-RPC error %d: %s", msg.Error.Code, msg.Error.Message)
		}
		return msg.Result, nil
	}
}

func (c *client) send(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if _, err := c.conn.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	return nil
}

// runPrint runs python's print(1) in the sandbox id and checks its output.
func (c *client) runPrint(ctx context.Context, id string) error { return runPrint(ctx, c, id) }

// caller is a client of either transport: the socket's or HTTP's.
type caller interface {
	call(ctx context.Context, tool string, args map[string]any) (map[string]any, error)
}

// runPrint runs python's print(1) in the sandbox id through c and checks
// its output.
func runPrint(ctx context.Context, c caller, id string) error {
	out, err := c.call(ctx, "execute_code", map[string]any{"sandbox_id": id, "code": "print(1)"})
	if err != nil {
		return err
	}
	if out["stdout"] != "1\n" {
		return fmt.Errorf("print(1) gave %v", out)
	}
	return nil
}

// createSandbox creates a sandbox of image ("" for the default) with the
// default spec otherwise, and returns its id.
func (c *client) createSandbox(ctx context.Context, image string) (string, error) {
	args := map[string]any{}
	if image != "" {
		args["image"] = image
	}
	out, err := c.call(ctx, "create_sandbox", args)
	if err != nil {
		return "", err
	}
	id, _ := out["sandbox_id"].(string)
	if id == "" {
		return "", fmt.Errorf("create_sandbox gave no sandbox_id: %v", out)
	}
	return id, nil
}

func (c *client) deleteSandbox(ctx context.Context, id string) error {
	_, err := c.call(ctx, "delete_sandbox", map[string]any{"sandbox_id": id})
	return err
}
