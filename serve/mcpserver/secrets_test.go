package mcpserver

import (
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func (f *fakeBackend) ListSecrets() []sandbox.SecretInfo {
	return []sandbox.SecretInfo{
		{Name: "OPENAI_API_KEY", Hosts: []string{"api.openai.com"}, Available: true},
		{Name: "GH_TOKEN", Hosts: []string{"api.github.com"}, Body: true, Why: "no value stored"},
		{Name: "MAPS_KEY", Hosts: []string{"maps.example.com"}, Query: "key", Available: true},
	}
}

func TestListSecrets(t *testing.T) {
	runToolCases(t, []toolCase{{
		name: "list_secrets tells names and hosts",
		tool: "list_secrets", args: map[string]any{},
		want: map[string]any{"secrets": []any{
			map[string]any{"name": "OPENAI_API_KEY", "hosts": []any{"api.openai.com"}, "body": false, "available": true},
			map[string]any{"name": "GH_TOKEN", "hosts": []any{"api.github.com"}, "body": true, "available": false, "why": "no value stored"},
			map[string]any{"name": "MAPS_KEY", "hosts": []any{"maps.example.com"}, "body": false, "query": "key", "available": true},
		}},
		wantText: []string{"$OPENAI_API_KEY: works with api.openai.com.", "GH_TOKEN: not available (no value stored)", "placeholder",
			"$MAPS_KEY: works with maps.example.com (in query parameter key only)."},
	}})
}
