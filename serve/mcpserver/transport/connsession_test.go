package transport

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sandboxesURI is the changes URI package mcpserver gives the transport.
const sandboxesURI = "sandtray://sandboxes"

func TestChangeNotificationsFollowTheSessionState(t *testing.T) {
	c := newConnSession(sandboxesURI)
	methods := func() []string {
		var out []string
		for _, n := range c.changeNotifications() {
			out = append(out, n.Method)
		}
		return out
	}
	if got := methods(); got != nil {
		t.Errorf("before initialize: %v, want nothing", got)
	}
	c.Initialize()
	if diff := cmp.Diff([]string{"notifications/resources/list_changed"}, methods()); diff != "" {
		t.Errorf("after initialize (-want +got):\n%s", diff)
	}
	c.SubscribeToResource(sandboxesURI)
	want := []string{"notifications/resources/list_changed", "notifications/resources/updated"}
	if diff := cmp.Diff(want, methods()); diff != "" {
		t.Errorf("subscribed (-want +got):\n%s", diff)
	}
	if uri := c.changeNotifications()[1].Params.AdditionalFields["uri"]; uri != sandboxesURI {
		t.Errorf("updated names %v, want %s", uri, sandboxesURI)
	}
}
