// Package control is the engine's control endpoint: a private socket beside
// the MCP socket (serve/socket's folder and owner-only checks; on Windows
// a second pipe) on which the user's own tools talk to the running engine:
// `sandtray egress …` answers the egress gate's pending requests, and an
// app started while a headless engine runs becomes that engine's window
// through it (app.go: one window per engine). The window's methods are one
// table (gui.go, HandleGUI) and one typed client (guiclient.go,
// GUIClient), which the app that runs the engine uses too, over an
// in-memory pipe (Server.Pipe): every window takes the same path.
//
// It is never reachable through MCP, the HTTP endpoint or from inside a
// sandbox: only a process of the user's own account can connect, so a
// model cannot approve its own requests.
//
// The protocol is newline-delimited JSON. A request is
// {"id":N,"method":"…","params":{…}}; its response {"id":N,"result":…} or
// {"id":N,"error":{"kind":"…","message":"…"}}. A stream method (such as
// egress.watch) answers with any number of {"id":N,"event":…} lines, until
// the client closes the connection. A connection carries one request at a
// time; a client that streams opens a connection for it.
package control

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Request is one line a client sends.
type Request struct {
	ID     uint64          `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// Response is one line the server sends: a result, an error, or (for a
// stream) an event.
type Response struct {
	ID     uint64          `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
	Event  json.RawMessage `json:"event,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// Error is a failed request: its kind (one of the sandbox error kinds, see
// kinds) and a sentence for a person.
type Error struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Message }

// Unwrap makes errors.Is see the sandbox error kind on the client's side.
func (e *Error) Unwrap() error {
	for _, k := range kinds {
		if k.name == e.Kind {
			return k.err
		}
	}
	return nil
}

var kinds = []struct {
	name string
	err  error
}{
	{"invalid", sandbox.ErrInvalid}, {"not_found", sandbox.ErrNotFound}, {"forbidden", sandbox.ErrForbidden},
	{"conflict", sandbox.ErrConflict}, {"unsupported", sandbox.ErrUnsupported}, {"unavailable", sandbox.ErrUnavailable},
}

// errorOf classifies err for the wire.
func errorOf(err error) *Error {
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			return &Error{Kind: k.name, Message: err.Error()}
		}
	}
	return &Error{Kind: "internal", Message: err.Error()}
}

// The methods, with their params and results.
const (
	// MethodPending lists the egress gate's pending requests:
	// no params; result []sandbox.EgressPending.
	MethodPending = "egress.pending"
	// MethodAnswer answers one pending request by id: AnswerParams; result
	// AnswerResult.
	MethodAnswer = "egress.answer"
	// MethodAnswerHost answers a sandbox's pending requests for a host
	// (or adds an "always" rule when none waits): AnswerParams with
	// Sandbox and Host; result AnswerResult.
	MethodAnswerHost = "egress.answer_host"
	// MethodNetwork is one sandbox's rules and recent decisions:
	// SandboxParams; result sandbox.EgressNetwork.
	MethodNetwork = "egress.network"
	// MethodWatch streams the pending requests: an event
	// ([]sandbox.EgressPending) at once and at every change.
	MethodWatch = "egress.watch"
)

// AnswerParams answer pending requests: by ID, or by Sandbox (id, prefix
// or name) and Host ("host" or "host:port").
type AnswerParams struct {
	ID      string               `json:"id,omitempty"`
	Sandbox string               `json:"sandbox,omitempty"`
	Host    string               `json:"host,omitempty"`
	Answer  sandbox.EgressAnswer `json:"answer"`
}

// AnswerResult says how many pending requests an answer settled.
type AnswerResult struct {
	Answered int `json:"answered"`
}

// SandboxParams name one sandbox (id, prefix or name).
type SandboxParams struct {
	Sandbox string `json:"sandbox"`
}

// Path is the control endpoint beside the MCP endpoint at mcpPath: a
// socket named control.sock in the same private folder, or on Windows the
// pipe of the same name with "-control" added.
func Path(mcpPath string) string {
	if strings.HasPrefix(mcpPath, `\\.\pipe\`) || strings.HasPrefix(mcpPath, `//./pipe/`) {
		return mcpPath + "-control"
	}
	return filepath.Join(filepath.Dir(mcpPath), "control.sock")
}

// errBadParams is a request whose params do not fit its method.
func errBadParams(method string, err error) error {
	return fmt.Errorf("params of %s: %v: %w", method, err, sandbox.ErrInvalid)
}
