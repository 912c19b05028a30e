package securitytest

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxReplyLine is the largest reply line the tests accept: the server's
// budget (512 KiB in each of a reply's two forms, its structured content and
// its text) plus the JSON-RPC envelope.
const maxReplyLine = 1200 << 10

// largestLineSince is the longest raw line the server sent after the first
// `from` lines.
func (c *client) largestLineSince(from int) int {
	lines := c.tap.lines()
	n := 0
	for _, l := range lines[min(from, len(lines)):] {
		n = max(n, len(l))
	}
	return n
}

// TestRepliesAreBounded (F15): output the sandbox printed and names it made
// cannot make a reply larger than a client accepts. Twelve calls printing
// 2 MiB each, then sandbox_logs with a large tail, gave a reply of about
// 25 MB; now every reply stays within the budget and pages.
func TestRepliesAreBounded(t *testing.T) {
	e := newEnv(t)
	id := e.client.sandbox(t, nil)
	for range 12 {
		e.client.command(t, id, `head -c 2097152 /dev/zero | tr '\0' '<'`, 30)
	}

	t.Run("sandbox_logs", func(t *testing.T) {
		skip, seen := 0, 0
		for page := 0; ; page++ {
			from := len(e.client.tap.lines())
			args := map[string]any{"sandbox_id": id, "tail": 1000}
			if skip > 0 {
				args["skip"] = skip
			}
			r := e.client.ok(t, "sandbox_logs", args)
			if n := e.client.largestLineSince(from); n > maxReplyLine {
				t.Fatalf("sandbox_logs page %d: a reply of %d bytes, want at most %d", page, n, maxReplyLine)
			}
			entries, _ := r.data["entries"].([]any)
			if len(entries) == 0 {
				t.Fatalf("sandbox_logs page %d (skip %d) returned no entries: %s", page, skip, r.text)
			}
			seen += len(entries)
			next := int(r.num("next_skip"))
			if next == 0 {
				break
			}
			if !strings.Contains(r.text, fmt.Sprintf("skip=%d", next)) {
				t.Errorf("page %d's text does not say how to get the older entries (skip=%d):\n%.300s", page, next, r.text)
			}
			if next <= skip || page > 40 {
				t.Fatalf("paging does not advance: skip %d then %d", skip, next)
			}
			skip = next
		}
		if seen < 13 { // create_sandbox and the twelve commands
			t.Errorf("paging through sandbox_logs showed %d entries, want all 13", seen)
		}
	})

	t.Run("logs resource", func(t *testing.T) {
		from := len(e.client.tap.lines())
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		res, err := e.client.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "sandtray://sandbox/" + id + "/logs"})
		if err != nil {
			t.Fatalf("read the logs resource: %v", err)
		}
		if n := e.client.largestLineSince(from); n > maxReplyLine {
			t.Errorf("the logs resource: a reply of %d bytes, want at most %d", n, maxReplyLine)
		}
		if len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, "next_skip") {
			t.Errorf("the logs resource does not say how to read the rest: %.300s", res.Contents[0].Text)
		}
	})

	t.Run("list_files", func(t *testing.T) {
		// 3000 files under eight levels of 200-character folder names.
		e.client.command(t, id, `d=/workspace; for i in $(seq 8); do d="$d/$(printf 'd%.0s' $(seq 200))$i"; done; mkdir -p "$d" && cd "$d" && seq 3000 | xargs touch`, 60)
		offset, seen := 0, 0
		for page := 0; page < 100; page++ {
			from := len(e.client.tap.lines())
			args := map[string]any{"sandbox_id": id, "depth": 10}
			if offset > 0 {
				args["offset"] = offset
			}
			r := e.client.ok(t, "list_files", args)
			if n := e.client.largestLineSince(from); n > maxReplyLine {
				t.Fatalf("list_files page %d: a reply of %d bytes, want at most %d", page, n, maxReplyLine)
			}
			entries, _ := r.data["entries"].([]any)
			seen += len(entries)
			next := int(r.num("next_offset"))
			if next == 0 {
				break
			}
			if next <= offset {
				t.Fatalf("list_files paging does not advance: offset %d then %d", offset, next)
			}
			offset = next
		}
		if seen < 3000 {
			t.Errorf("paging through list_files showed %d entries, want at least 3000", seen)
		}
	})

	t.Run("job_status", func(t *testing.T) {
		r := e.client.ok(t, "execute_command", map[string]any{"sandbox_id": id, "background": true,
			"command": `head -c 8388608 /dev/zero | tr '\0' '<'; sleep 30`})
		job := r.str("job_id")
		eventually(t, 30*time.Second, "the job wrote its 8 MB of output", func() bool {
			st, err := e.eng.JobStatus(context.Background(), job, math.MaxInt64)
			return err == nil && st.NextOffset >= 8<<20
		})
		from := len(e.client.tap.lines())
		e.client.ok(t, "job_status", map[string]any{"job_id": job, "since": 0})
		if n := e.client.largestLineSince(from); n > maxReplyLine {
			t.Errorf("job_status: a reply of %d bytes, want at most %d", n, maxReplyLine)
		}
		e.client.ok(t, "job_stop", map[string]any{"job_id": job})
	})
}
