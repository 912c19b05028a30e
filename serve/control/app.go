package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// One app per user: the engine has at most one window, either its own (the
// app that started the engine) or the window of an app that started later
// and became the GUI of this engine through the control endpoint
// (app.attach). A further app start asks that window to come to the front
// (app.focus) and exits.
const (
	// MethodAppAttach makes the caller the engine's window: a stream whose
	// first event is AppEvent{Attached: true} and then one AppEvent{Focus:
	// true} per focus request, until the caller closes the connection. It
	// fails with ErrWindowOpen when a window is open already.
	MethodAppAttach = "app.attach"
	// MethodAppFocus asks the open window to show itself and come to the
	// front: no params; result AppStatus. It fails (not_found) when the
	// engine has no window.
	MethodAppFocus = "app.focus"
	// MethodAppStatus says which window the engine has: no params; result
	// AppStatus.
	MethodAppStatus = "app.status"
	// MethodEngineStop stops a headless engine, keeping every sandbox (the
	// ephemeral ones are reaped after their grace by the next engine): an
	// attached app's Restart now, after which the app starts the engine
	// itself. No params; the result comes before the engine stops.
	MethodEngineStop = "engine.stop"
)

// The window an engine has (AppStatus.Window).
const (
	WindowNone     = ""         // headless: started by the shim or `sandtray serve`
	WindowOwn      = "own"      // the app that runs the engine
	WindowAttached = "attached" // an app attached through app.attach
)

// AppEvent is one event of an app.attach stream.
type AppEvent struct {
	Attached bool `json:"attached,omitempty"`
	Focus    bool `json:"focus,omitempty"`
}

// AppStatus is the engine's window, the config file the engine runs with
// (what an attached app's Settings edit) and the MCP socket it serves (""
// for an engine serving one client on stdio, which an app does not attach
// to).
type AppStatus struct {
	Window     string `json:"window"`
	ConfigPath string `json:"config_path,omitempty"`
	MCPSocket  string `json:"mcp_socket,omitempty"`
}

// ErrWindowOpen is app.attach's refusal when the engine has a window.
var ErrWindowOpen = fmt.Errorf("a Sandtray window is open already: %w", sandbox.ErrConflict)

// ErrNoWindow is app.focus's answer from a headless engine.
var ErrNoWindow = fmt.Errorf("this Sandtray engine has no window: %w", sandbox.ErrNotFound)

// windows is the server's record of the engine's window.
type windows struct {
	mu       sync.Mutex
	own      func()        // shows the engine's own window; nil without one
	attached chan struct{} // focus requests for the attached app; nil without one
	detached func()        // called when an attached app leaves
	config   string
	mcp      string
}

// SetWindow records the engine's own window: show brings it to the front
// (it must not block). nil: the engine has no window of its own.
func (s *Server) SetWindow(show func()) {
	s.win.mu.Lock()
	s.win.own = show
	s.win.mu.Unlock()
}

// OnDetach sets what runs when an attached app leaves (the host forgets
// what its window asked for, such as which stats it shows).
func (s *Server) OnDetach(f func()) {
	s.win.mu.Lock()
	s.win.detached = f
	s.win.mu.Unlock()
}

// SetInfo records the config file the engine runs with and the MCP socket
// it serves ("" on stdio), for AppStatus.
func (s *Server) SetInfo(configPath, mcpSocket string) {
	s.win.mu.Lock()
	s.win.config, s.win.mcp = configPath, mcpSocket
	s.win.mu.Unlock()
}

func (s *Server) appStatus() AppStatus {
	s.win.mu.Lock()
	defer s.win.mu.Unlock()
	st := AppStatus{ConfigPath: s.win.config, MCPSocket: s.win.mcp}
	switch {
	case s.win.own != nil:
		st.Window = WindowOwn
	case s.win.attached != nil:
		st.Window = WindowAttached
	}
	return st
}

// handleApp adds the app methods.
func (s *Server) handleApp() {
	s.Handle(MethodAppStatus, func(context.Context, json.RawMessage, func(any) error) (any, error) {
		return s.appStatus(), nil
	})
	s.Handle(MethodAppFocus, func(context.Context, json.RawMessage, func(any) error) (any, error) {
		s.win.mu.Lock()
		own, ch := s.win.own, s.win.attached
		s.win.mu.Unlock()
		switch {
		case own != nil:
			own()
		case ch != nil:
			select {
			case ch <- struct{}{}:
			default: // one is on its way already
			}
		default:
			return nil, ErrNoWindow
		}
		return s.appStatus(), nil
	})
	s.HandleStream(MethodAppAttach, func(ctx context.Context, _ json.RawMessage, send func(any) error) (any, error) {
		ch := make(chan struct{}, 1)
		s.win.mu.Lock()
		if s.win.own != nil || s.win.attached != nil {
			s.win.mu.Unlock()
			return nil, ErrWindowOpen
		}
		s.win.attached = ch
		s.win.mu.Unlock()
		defer func() {
			s.win.mu.Lock()
			s.win.attached = nil
			detached := s.win.detached
			s.win.mu.Unlock()
			if detached != nil {
				detached()
			}
		}()
		if err := send(AppEvent{Attached: true}); err != nil {
			return nil, err
		}
		for {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-ch:
				if err := send(AppEvent{Focus: true}); err != nil {
					return nil, err
				}
			}
		}
	})
}

// Focus asks the engine's window to come to the front (ErrNoWindow, as
// errors.Is sees it through sandbox.ErrNotFound, from a headless engine).
func (c *Client) Focus(ctx context.Context) (AppStatus, error) {
	var st AppStatus
	return st, c.Call(ctx, MethodAppFocus, nil, &st)
}

// Status says which window the engine has.
func (c *Client) Status(ctx context.Context) (AppStatus, error) {
	var st AppStatus
	return st, c.Call(ctx, MethodAppStatus, nil, &st)
}

// Attach makes the caller the engine's window (use a client of its own):
// attached is called once the engine has accepted it, then focus at every
// focus request, until ctx is done or the engine goes away. It fails with
// ErrWindowOpen (a conflict) when a window is open already.
func (c *Client) Attach(ctx context.Context, attached, focus func()) error {
	return c.Stream(ctx, MethodAppAttach, nil, func(raw json.RawMessage) error {
		var ev AppEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return err
		}
		switch {
		case ev.Attached:
			attached()
		case ev.Focus:
			focus()
		}
		return nil
	})
}

// IsNoWindow reports whether err is a headless engine's answer to Focus.
func IsNoWindow(err error) bool { return errors.Is(err, sandbox.ErrNotFound) }
