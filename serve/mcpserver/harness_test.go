package mcpserver

import (
	"github.com/sandtray/sandtray/engine"

	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// testTimeout bounds every wait in these tests, so a hang fails rather than
// stalling the suite.
const testTimeout = 10 * time.Second

// pipeConn is one side of an in-memory connection made of two io.Pipes.
// Closing it closes its write side, as a client closing stdin does, so the
// other side sees EOF rather than an error.
type pipeConn struct {
	*io.PipeReader
	*io.PipeWriter
}

func (p pipeConn) Close() error { return p.PipeWriter.Close() }

// serverConn also closes its read side, as ServeConn's conn.Close must end
// a pending read.
type serverConn struct{ pipeConn }

func (s serverConn) Close() error {
	s.PipeReader.Close()
	return s.PipeWriter.Close()
}

// serve serves one connection of a new server on fake and returns the
// client's end; cleanup closes the client's side and waits for ServeConn to
// return. Unless opts says
// otherwise, the server offers the engine's real languages, as sandtray does,
// so the golden schemas show what users see.
func serve(t *testing.T, fake *fakeBackend, opts Options) pipeConn {
	t.Helper()
	return serveWith(t, newServer(fake, opts))
}

// newServer returns a server on fake with the engine's real languages,
// unless opts names others.
func newServer(fake *fakeBackend, opts Options) *Server {
	if opts.Languages == nil {
		opts.Languages, opts.LanguageAliases = engine.Languages(), engine.LanguageAliases()
	}
	return New(fake, opts)
}

// serveWith serves one more connection of srv.
func serveWith(t *testing.T, srv *Server) pipeConn {
	t.Helper()
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	client := pipeConn{PipeReader: toClient, PipeWriter: fromClient}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- srv.ServeConn(ctx, serverConn{pipeConn{PipeReader: toServer, PipeWriter: fromServer}})
	}()
	t.Cleanup(func() {
		client.Close()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("ServeConn: %v", err)
			}
		case <-time.After(testTimeout):
			t.Error("ServeConn did not return after the client closed its connection")
		}
		cancel()
		// toClient is left open: its writer is closed, so the client's
		// reader ends with EOF; closing it could race that read into an error.
	})
	return client
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// mcpGoClient connects mcp-go's client over conn and initializes it.
func mcpGoClient(t *testing.T, conn pipeConn, opts ...client.ClientOption) *client.Client {
	t.Helper()
	ctx := testContext(t)
	c := client.NewClient(transport.NewIO(conn.PipeReader, conn.PipeWriter, nil), opts...)
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start mcp-go client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "mcp-go-test", Version: "1.2.1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize mcp-go client: %v", err)
	}
	return c
}

// sdkClient connects the independent go-sdk client over conn. protocol ""
// takes the SDK's default (the stateless 2026-07-28 protocol).
func sdkClient(t *testing.T, conn pipeConn, protocol string, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-test", Version: "1.8.0"}, opts)
	cs, err := c.Connect(testContext(t), &sdk.IOTransport{Reader: conn.PipeReader, Writer: conn.PipeWriter}, &sdk.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatalf("connect go-sdk client: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callMCPGo calls a tool through mcp-go's client and fails on a protocol error.
func callMCPGo(t *testing.T, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(testContext(t), req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// textOfResult joins a result's text parts.
func textOfResult(res *mcp.CallToolResult) string {
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			text += tc.Text
		}
	}
	return text
}

// structuredMap decodes a result's structuredContent into a generic map.
func structuredMap(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	raw := res.RawStructuredContent
	if raw == nil {
		var err error
		if raw, err = json.Marshal(res.StructuredContent); err != nil {
			t.Fatalf("encode structured content: %v", err)
		}
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("structured content %s is not an object: %v", raw, err)
	}
	return m
}

func callRequest(name string, args map[string]any) mcp.CallToolRequest {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	return req
}
