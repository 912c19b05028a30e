package egress

import (
	"fmt"
	"strings"
	"testing"
)

// TestSetRulesApplyToTheNextRequest: a host the config allowed is denied
// once the rules change while the gate runs, and one it did not mention is
// allowed; bad patterns change nothing.
func TestSetRulesApplyToTheNextRequest(t *testing.T) {
	_, port := upstream(t)
	hosts := map[string][]string{"mirror.test": {"127.0.0.1"}, "other.test": {"127.0.0.1"}}
	tg := newTestGate(t, Options{Allow: []string{fmt.Sprintf("mirror.test:%d", port)}}, hosts)
	get := func(host string) (int, string) {
		resp, body := tg.raw(t, fmt.Sprintf("GET http://%s:%d/ HTTP/1.1\r\nHost: %s:%d\r\n\r\n", host, port, host, port))
		return resp.StatusCode, body
	}
	if code, body := get("mirror.test"); code != 200 {
		t.Fatalf("before: %d %s", code, body)
	}
	if err := tg.SetRules([]string{fmt.Sprintf("other.test:%d", port)}, []string{"mirror.test"}, false); err != nil {
		t.Fatal(err)
	}
	if code, body := get("mirror.test"); code != 403 || !strings.Contains(body, `deny "mirror.test"`) {
		t.Errorf("after denying mirror.test: %d %s", code, body)
	}
	if code, body := get("other.test"); code != 200 {
		t.Errorf("after allowing other.test: %d %s", code, body)
	}
	if err := tg.SetRules([]string{"bad pattern/"}, nil, false); err == nil {
		t.Error("a bad pattern was taken")
	}
	if code, _ := get("other.test"); code != 200 {
		t.Error("a refused SetRules changed the rules")
	}
}
