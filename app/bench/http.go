package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/sandtray/sandtray/serve/mcpserver"
)

// timeHTTP times warm execute_code calls in sandbox id over the stack's MCP
// server served on Streamable HTTP on a loopback port, as `serve --http`
// serves it (bearer token, Origin and Host checks included).
func timeHTTP(ctx context.Context, s *stack, id string, n int) (Quantiles, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Quantiles{}, err
	}
	token := randomHex() + randomHex()
	ctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() {
		served <- s.srv.NewHTTP(mcpserver.HTTPOptions{
			Token: func() (string, error) { return token, nil }, Listen: ln.Addr().String(),
		}).Serve(ctx, ln)
	}()
	defer func() {
		cancel()
		<-served
	}()
	c, err := dialHTTP(ctx, "http://"+ln.Addr().String()+mcpserver.PathStreamable, token, "sandtray-bench-http")
	if err != nil {
		return Quantiles{}, err
	}
	return timeCalls(ctx, n, func(ctx context.Context) error { return runPrint(ctx, c, id) })
}

// httpClient is a minimal MCP client over Streamable HTTP, the counterpart
// of client: one keep-alive connection, sequential calls.
type httpClient struct {
	url, token, session string
	hc                  *http.Client
	next                int
}

// dialHTTP completes the MCP handshake at url.
func dialHTTP(ctx context.Context, url, token, name string) (*httpClient, error) {
	c := &httpClient{url: url, token: token, hc: &http.Client{}}
	init := map[string]any{"protocolVersion": protocolVersion, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": name, "version": "1.0"}}
	if _, err := c.request(ctx, "initialize", init); err != nil {
		return nil, fmt.Errorf("initialize over HTTP: %w", err)
	}
	if _, err := c.post(ctx, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		return nil, err
	}
	return c, nil
}

// call is client.call over HTTP.
func (c *httpClient) call(ctx context.Context, tool string, args map[string]any) (map[string]any, error) {
	return callTool(ctx, c.request, tool, args)
}

// request sends one request and returns its result.
func (c *httpClient) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	c.next++
	body, err := c.post(ctx, map[string]any{"jsonrpc": "2.0", "id": c.next, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		return nil, fmt.Errorf("decode reply: %w", err)
	}
	if msg.Error != nil {
		return nil, errors.New(msg.Error.Message)
	}
	return msg.Result, nil
}

// post sends one message and returns the reply's JSON: the body, or the
// last event of an SSE reply (notifications come first, the reply last).
func (c *httpClient) post(ctx context.Context, msg any) ([]byte, error) {
	b, _ := json.Marshal(msg)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("MCP-Protocol-Version", protocolVersion)
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		c.session = id
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		if i := bytes.LastIndex(body, []byte("data: ")); i >= 0 {
			body = bytes.TrimSpace(body[i+len("data: "):])
		}
	}
	return body, nil
}
