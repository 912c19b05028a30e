package transport

import (
	"encoding/json"
	"testing"
)

func TestRequestKeyMatchesIDsAsJSONValues(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{`7`, `7.0`, true},
		{`"x"`, `"x"`, true},
		{`7`, `"7"`, false},
		{`1e3`, `1000`, true},
	}
	for _, tt := range tests {
		if got := requestKey(json.RawMessage(tt.a)) == requestKey(json.RawMessage(tt.b)); got != tt.same {
			t.Errorf("ids %s and %s: same = %v, want %v", tt.a, tt.b, got, tt.same)
		}
	}
}
