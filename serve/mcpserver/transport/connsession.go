package transport

import (
	"crypto/rand"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// connSession is the mcp-go session of one connection. It records the
// client's info and protocol version, which mcp-go sets at initialize (or on
// each stateless request), and the resources the client subscribed to.
type connSession struct {
	id              string
	changesURI      string // the one resource clients may subscribe to
	notifications   chan mcp.JSONRPCNotification
	initialized     atomic.Bool
	clientInfo      atomic.Pointer[mcp.Implementation]
	capabilities    atomic.Pointer[mcp.ClientCapabilities]
	protocolVersion atomic.Pointer[string]

	// changed holds one pending "the set of sandboxes changed" for the
	// connection's writer: any number of changes before it looks become one
	// notification, and the host that reports them never waits.
	changed chan struct{}

	subsMu sync.Mutex
	subs   map[string]bool // subscribed resource URIs
}

var (
	_ server.SessionWithClientInfo               = (*connSession)(nil)
	_ server.SessionWithProtocolVersion          = (*connSession)(nil)
	_ server.SessionWithResourceSubscriptionsErr = (*connSession)(nil)
)

func newConnSession(changesURI string) *connSession {
	// Session ids outlive the process in the engine's state, so they must
	// not repeat after a restart: random, not a counter.
	return &connSession{
		id:            rand.Text(),
		changesURI:    changesURI,
		notifications: make(chan mcp.JSONRPCNotification, 256),
		changed:       make(chan struct{}, 1),
		subs:          make(map[string]bool),
	}
}

func (c *connSession) SessionID() string { return c.id }
func (c *connSession) Initialize()       { c.initialized.Store(true) }
func (c *connSession) Initialized() bool { return c.initialized.Load() }

func (c *connSession) NotificationChannel() chan<- mcp.JSONRPCNotification {
	return c.notifications
}

func (c *connSession) GetClientInfo() mcp.Implementation {
	if p := c.clientInfo.Load(); p != nil {
		return *p
	}
	return mcp.Implementation{}
}

func (c *connSession) SetClientInfo(info mcp.Implementation) { c.clientInfo.Store(&info) }

func (c *connSession) GetClientCapabilities() mcp.ClientCapabilities {
	if p := c.capabilities.Load(); p != nil {
		return *p
	}
	return mcp.ClientCapabilities{}
}

func (c *connSession) SetClientCapabilities(caps mcp.ClientCapabilities) {
	c.capabilities.Store(&caps)
}

func (c *connSession) ProtocolVersion() string {
	if p := c.protocolVersion.Load(); p != nil {
		return *p
	}
	return ""
}

func (c *connSession) SetProtocolVersion(v string) { c.protocolVersion.Store(&v) }

// SubscribeToResourceErr accepts a subscription to the changes URI
// (sandtray://sandboxes), the one resource whose changes the server hears
// about. mcp-go calls it for
// resources/subscribe and for a stateless client's subscriptions/listen.
func (c *connSession) SubscribeToResourceErr(uri string) error {
	if uri != c.changesURI {
		return fmt.Errorf("only %s sends updates; read %s again for newer content", c.changesURI, uri)
	}
	c.SubscribeToResource(uri)
	return nil
}

func (c *connSession) SubscribeToResource(uri string) {
	c.subsMu.Lock()
	defer c.subsMu.Unlock()
	c.subs[uri] = true
}

func (c *connSession) UnsubscribeFromResource(uri string) {
	c.subsMu.Lock()
	defer c.subsMu.Unlock()
	delete(c.subs, uri)
}

func (c *connSession) SubscribedResources() []string {
	c.subsMu.Lock()
	defer c.subsMu.Unlock()
	uris := make([]string, 0, len(c.subs))
	for uri := range c.subs {
		uris = append(uris, uri)
	}
	slices.Sort(uris)
	return uris
}

func (c *connSession) IsSubscribedToResource(uri string) bool {
	c.subsMu.Lock()
	defer c.subsMu.Unlock()
	return c.subs[uri]
}

// markChanged records that the set of sandboxes changed. It never blocks.
func (c *connSession) markChanged() {
	select {
	case c.changed <- struct{}{}:
	default: // one is already pending; it covers this change too
	}
}

// changeNotifications are what the client hears when the set of sandboxes
// changes: nothing before it has initialized, then resources/list_changed,
// and resources/updated if it subscribed to the changes URI.
func (c *connSession) changeNotifications() []mcp.JSONRPCNotification {
	if !c.Initialized() {
		return nil
	}
	notes := []mcp.JSONRPCNotification{notification(mcp.MethodNotificationResourcesListChanged, nil)}
	if c.IsSubscribedToResource(c.changesURI) {
		notes = append(notes, notification(mcp.MethodNotificationResourceUpdated, map[string]any{"uri": c.changesURI}))
	}
	return notes
}

func notification(method string, params map[string]any) mcp.JSONRPCNotification {
	return mcp.JSONRPCNotification{
		JSONRPC:      mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{Method: method, Params: mcp.NotificationParams{AdditionalFields: params}},
	}
}
