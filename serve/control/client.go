package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Client talks to a running engine's control endpoint. It is safe for
// concurrent use; calls take turns on its connection.
type Client struct {
	mu   sync.Mutex
	conn net.Conn
	sc   *bufio.Scanner
	seq  uint64
}

// NewClient wraps a connection to the endpoint (serve/socket's
// DialPrivate checks that the engine serving it is the user's).
func NewClient(c net.Conn) *Client {
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	return &Client{conn: c, sc: sc}
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Call sends method with params and decodes the result into out (unless nil).
func (c *Client) Call(ctx context.Context, method string, params, out any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { c.conn.Close() })
	defer stop()
	c.seq++
	id := c.seq
	if err := c.send(id, method, params); err != nil {
		return err
	}
	resp, err := c.read()
	if err != nil {
		return err
	}
	if resp.Error != nil {
		return resp.Error
	}
	if out != nil {
		return json.Unmarshal(resp.Result, out)
	}
	return nil
}

// Stream sends a stream method and calls fn with each event until ctx is
// done, the connection ends, fn fails, or the server ends the stream. The client is the stream's
// alone afterwards: use one client per stream.
func (c *Client) Stream(ctx context.Context, method string, params any, fn func(json.RawMessage) error) error {
	return c.CallStream(ctx, method, params, fn, nil)
}

func (c *Client) send(id uint64, method string, params any) error {
	var raw json.RawMessage
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return err
		}
		raw = b
	}
	b, err := json.Marshal(Request{ID: id, Method: method, Params: raw})
	if err != nil {
		return err
	}
	if _, err := c.conn.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("control endpoint: %w", err)
	}
	return nil
}

func (c *Client) read() (Response, error) {
	if !c.sc.Scan() {
		err := c.sc.Err()
		if err == nil {
			err = errors.New("the engine closed the connection")
		}
		return Response{}, fmt.Errorf("control endpoint: %w", err)
	}
	var r Response
	if err := json.Unmarshal(c.sc.Bytes(), &r); err != nil {
		return Response{}, fmt.Errorf("control endpoint: %w", err)
	}
	return r, nil
}

// Pending lists the egress gate's pending requests.
func (c *Client) Pending(ctx context.Context) ([]sandbox.EgressPending, error) {
	var out []sandbox.EgressPending
	return out, c.Call(ctx, MethodPending, nil, &out)
}

// AnswerHost answers sandbox's pending requests for host with a.
func (c *Client) AnswerHost(ctx context.Context, sandboxRef, host string, a sandbox.EgressAnswer) (int, error) {
	var out AnswerResult
	err := c.Call(ctx, MethodAnswerHost, AnswerParams{Sandbox: sandboxRef, Host: host, Answer: a}, &out)
	return out.Answered, err
}

// Answer answers the pending request id with a.
func (c *Client) Answer(ctx context.Context, id string, a sandbox.EgressAnswer) error {
	return c.Call(ctx, MethodAnswer, AnswerParams{ID: id, Answer: a}, nil)
}

// Network returns one sandbox's rules and recent decisions.
func (c *Client) Network(ctx context.Context, sandboxRef string) (sandbox.EgressNetwork, error) {
	var out sandbox.EgressNetwork
	return out, c.Call(ctx, MethodNetwork, SandboxParams{Sandbox: sandboxRef}, &out)
}

// CallStream sends a method that reports progress: fn gets each event, and
// the result, which ends it, is decoded into out (unless nil). Like Stream,
// it uses the connection alone (the server watches it for the client's
// leaving): use one client per call.
func (c *Client) CallStream(ctx context.Context, method string, params any, fn func(json.RawMessage) error, out any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { c.conn.Close() })
	defer stop()
	c.seq++
	if err := c.send(c.seq, method, params); err != nil {
		return err
	}
	for {
		resp, err := c.read()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		switch {
		case resp.Error != nil:
			return resp.Error
		case resp.Event != nil:
			if err := fn(resp.Event); err != nil {
				return err
			}
		default:
			if out != nil {
				return json.Unmarshal(resp.Result, out)
			}
			return nil
		}
	}
}
