package transport

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEnvelopeSnifferFindsTopLevelIDAndMethod(t *testing.T) {
	tests := []struct {
		name, msg  string
		wantID     string
		wantMethod string
	}{
		{"id first", `{"id":7,"jsonrpc":"2.0","method":"tools/call","params":{"x":"y"}}`, "7", "tools/call"},
		{"id last, nested decoys", `{"jsonrpc":"2.0","method":"ping","params":{"id":99,"method":"no","s":"\"id\":5"},"id":"a\"b"}`, `"a\"b"`, "ping"},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/x","params":{"id":[1,2]}}`, "", "notifications/x"},
		{"spaces", `{ "id" : 12 , "method" : "m" }`, "12", "m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s envelopeSniffer
			// Feed in small pieces, as a stream would arrive.
			for msg := tt.msg; msg != ""; {
				n := min(3, len(msg))
				s.feed([]byte(msg[:n]))
				msg = msg[n:]
			}
			if string(s.id) != tt.wantID || s.method != tt.wantMethod {
				t.Errorf("id %s method %q, want %s %q", s.id, s.method, tt.wantID, tt.wantMethod)
			}
		})
	}
}

// tooLong is the message package mcpserver gives a request of 2 KiB over a
// limit of 1 KiB (Options.Oversize).
const tooLong = "This request is 2 KiB, over the limit of 1 KiB per request. " +
	"Send less per call: split file content into several write_file calls, or copy a large file with copy_to_sandbox."

func TestOversizeReplyForEachKindOfMessage(t *testing.T) {
	tests := []struct {
		name string
		err  oversizeError
		want string // JSON, or "" for no reply
	}{
		{"tool call", oversizeError{size: 2048, id: json.RawMessage(`3`), method: "tools/call"},
			`{"id":3,"jsonrpc":"2.0","result":{"content":[{"text":"This request is 2 KiB, over the limit of 1 KiB per request. Send less per call: split file content into several write_file calls, or copy a large file with copy_to_sandbox.","type":"text"}],"isError":true,"resultType":"complete"}}`},
		{"other request", oversizeError{size: 2048, id: json.RawMessage(`"x"`), method: "tools/list"},
			`{"error":{"code":-32600,"message":"This request is 2 KiB, over the limit of 1 KiB per request. Send less per call: split file content into several write_file calls, or copy a large file with copy_to_sandbox."},"id":"x","jsonrpc":"2.0"}`},
		{"notification", oversizeError{size: 2048, method: "notifications/cancelled"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := oversizeReply(&tt.err, tooLong)
			if tt.want == "" {
				if got != nil {
					t.Errorf("reply = %s, want none", got)
				}
				return
			}
			var gotJSON, wantJSON any
			if err := json.Unmarshal(got, &gotJSON); err != nil {
				t.Fatalf("reply %s is not JSON: %v", got, err)
			}
			_ = json.Unmarshal([]byte(tt.want), &wantJSON)
			if diff := cmp.Diff(wantJSON, gotJSON); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
		})
	}
}
