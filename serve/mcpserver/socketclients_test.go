package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// socketClient is one MCP client of either library, connected over a socket
// and initialized, seen through what the socket tests need of it.
type socketClient struct {
	name     string // clientInfo name; its version is always "1"
	protocol string // the protocol version it negotiated
	// toolCount runs tools/list.
	toolCount func(ctx context.Context) (int, error)
	// command runs execute_command and returns its stdout.
	command func(ctx context.Context, command string) (string, error)
	// create runs create_sandbox with a progress token and returns the
	// progress messages received for that token.
	create func(ctx context.Context, token string) ([]string, error)
	close  func()
}

// clientKind connects one kind of client over conn.
type clientKind struct {
	name     string
	protocol string // the protocol it must negotiate, if it names one
	connect  func(t *testing.T, conn net.Conn, name string) *socketClient
}

var clientKinds = []clientKind{
	{"mcp-go", "", func(t *testing.T, conn net.Conn, name string) *socketClient { return mcpGoSocketClient(t, conn, name) }},
	{"go-sdk 2025-11-25", "2025-11-25", func(t *testing.T, conn net.Conn, name string) *socketClient {
		return sdkSocketClient(t, conn, name, "2025-11-25")
	}},
	// 2026-07-28 is the newest protocol both libraries speak.
	{"go-sdk 2026-07-28", "2026-07-28", func(t *testing.T, conn net.Conn, name string) *socketClient {
		return sdkSocketClient(t, conn, name, "2026-07-28")
	}},
	{"mcp-go initialize handshake", "", func(t *testing.T, conn net.Conn, name string) *socketClient {
		return mcpGoSocketClient(t, conn, name, client.WithLegacyProtocolOnly())
	}},
}

func mcpGoSocketClient(t *testing.T, conn net.Conn, name string, opts ...client.ClientOption) *socketClient {
	t.Helper()
	ctx := testContext(t)
	tr := transport.NewIO(conn, conn, nil)
	// Closing the client closes conn under its reader, which it would log.
	transport.WithCommandLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))(tr)
	c := client.NewClient(tr, opts...)
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start mcp-go client: %v", err)
	}
	var mu sync.Mutex
	progress := make(map[any][]string) // by token
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationProgress) {
			f := n.Params.AdditionalFields
			message, _ := f["message"].(string)
			mu.Lock()
			progress[f["progressToken"]] = append(progress[f["progressToken"]], message)
			mu.Unlock()
		}
	})
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatalf("initialize mcp-go client: %v", err)
	}
	return &socketClient{
		name: name, protocol: res.ProtocolVersion,
		toolCount: func(ctx context.Context) (int, error) {
			res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
			if err != nil {
				return 0, err
			}
			return len(res.Tools), nil
		},
		command: func(ctx context.Context, command string) (string, error) {
			res, err := c.CallTool(ctx, callRequest("execute_command", map[string]any{"command": command}))
			if err != nil {
				return "", err
			}
			return stdoutOf(structuredMapOf(res)), nil
		},
		create: func(ctx context.Context, token string) ([]string, error) {
			req := callRequest("create_sandbox", nil)
			req.Params.Meta = &mcp.Meta{ProgressToken: token}
			if _, err := c.CallTool(ctx, req); err != nil {
				return nil, err
			}
			// Progress precedes the result on the wire and the client
			// handles messages in order, so all of it has arrived.
			mu.Lock()
			defer mu.Unlock()
			return progress[token], nil
		},
		close: func() { c.Close() },
	}
}

func sdkSocketClient(t *testing.T, conn net.Conn, name, protocol string) *socketClient {
	t.Helper()
	var mu sync.Mutex
	progress := make(map[any][]string)
	arrived := make(chan struct{}, 64)
	c := sdk.NewClient(&sdk.Implementation{Name: name, Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			progress[req.Params.ProgressToken] = append(progress[req.Params.ProgressToken], req.Params.Message)
			mu.Unlock()
			arrived <- struct{}{}
		},
	})
	cs, err := c.Connect(testContext(t), &sdk.IOTransport{Reader: conn, Writer: conn}, &sdk.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatalf("connect go-sdk client: %v", err)
	}
	return &socketClient{
		name: name, protocol: cs.InitializeResult().ProtocolVersion,
		toolCount: func(ctx context.Context) (int, error) {
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				return 0, err
			}
			return len(res.Tools), nil
		},
		command: func(ctx context.Context, command string) (string, error) {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "execute_command", Arguments: map[string]any{"command": command}})
			if err != nil {
				return "", err
			}
			m, _ := res.StructuredContent.(map[string]any)
			return stdoutOf(m), nil
		},
		create: func(ctx context.Context, token string) ([]string, error) {
			params := &sdk.CallToolParams{Name: "create_sandbox"}
			params.SetProgressToken(token)
			if _, err := cs.CallTool(ctx, params); err != nil {
				return nil, err
			}
			// go-sdk may hand notifications to their handler after the
			// result; wait for the two the fake sends (or for ctx).
			for range 2 {
				select {
				case <-arrived:
				case <-ctx.Done():
				}
			}
			mu.Lock()
			defer mu.Unlock()
			return progress[token], nil
		},
		close: func() { cs.Close() },
	}
}

// structuredMapOf is structuredMap without a *testing.T, for client goroutines.
func structuredMapOf(res *mcp.CallToolResult) map[string]any {
	raw := res.RawStructuredContent
	if raw == nil {
		raw, _ = json.Marshal(res.StructuredContent)
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

func stdoutOf(structured map[string]any) string {
	s, _ := structured["stdout"].(string)
	return s
}
