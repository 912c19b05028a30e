package mcpserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestTasksOnTheSocketFollowTheJob: over the socket, an execute_command sent
// as a task answers with a task at once, starts a background job, and the
// task's result is the job's end; tasks/cancel stops the job. mcp-go runs a
// task on the context of the request that made it, which the socket cancels
// once it has answered: without tasks.go the task would be cancelled at once.
func TestTasksOnTheSocketFollowTheJob(t *testing.T) {
	fake := newFake()
	fake.outcome = sandbox.ExecOutcome{SandboxID: fake.info.ID, JobID: "job-1"}
	exit := 3
	fake.job = sandbox.JobStatus{ID: "job-1", SandboxID: fake.info.ID, Status: sandbox.JobExited, ExitCode: &exit, Output: "done\n"}
	r := newRawSession(t, fake, Options{})
	r.initialize()
	taskID := r.startTask(2, `{"command":"make"}`)
	r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":%q}}`, taskID))
	var res struct {
		Result struct {
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.reply(3), &res); err != nil {
		t.Fatal(err)
	}
	if out := res.Result.StructuredContent; out["stdout"] != "done\n" || out["exit_code"] != float64(3) {
		t.Errorf("the task's result: %v", out)
	}
	if req, _ := fake.lastCallOf("ExecCommand").Req.(sandbox.CommandRequest); !req.Background {
		t.Errorf("the task did not run as a background job: %+v", req)
	}

	fake.mu.Lock()
	fake.job = sandbox.JobStatus{ID: "job-1", SandboxID: fake.info.ID, Status: sandbox.JobRunning}
	fake.mu.Unlock()
	taskID = r.startTask(4, `{"command":"sleep 300"}`)
	r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":5,"method":"tasks/cancel","params":{"taskId":%q}}`, taskID))
	if reply := string(r.reply(5)); !strings.Contains(reply, `"cancelled"`) {
		t.Errorf("tasks/cancel: %s", reply)
	}
	deadline := time.Now().Add(testTimeout)
	for fake.lastCallOf("JobStop").Method == "" {
		if time.Now().After(deadline) {
			t.Fatal("cancelling the task did not stop its job")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startTask sends execute_command with args as a task and returns its id.
func (r *rawSession) startTask(id int, args string) string {
	r.t.Helper()
	r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"execute_command","arguments":%s,"task":{"ttl":60000}}}`, id, args))
	var created struct {
		Result struct {
			Task struct {
				TaskID string `json:"taskId"`
				Status string `json:"status"`
			} `json:"task"`
		} `json:"result"`
	}
	raw := r.reply(id)
	if err := json.Unmarshal(raw, &created); err != nil || created.Result.Task.TaskID == "" || created.Result.Task.Status != "working" {
		r.t.Fatalf("a task-augmented call should answer with a working task: %s", raw)
	}
	return created.Result.Task.TaskID
}

// reply returns the response with the given id, skipping the notifications
// (such as notifications/tasks/status) before it.
func (r *rawSession) reply(id int) []byte {
	r.t.Helper()
	for {
		raw := r.receive()
		var msg struct {
			ID *int `json:"id"`
		}
		if json.Unmarshal(raw, &msg) == nil && msg.ID != nil && *msg.ID == id {
			return raw
		}
	}
}

// lastCallOf returns the last call of method, or a zero fakeCall.
func (f *fakeBackend) lastCallOf(method string) fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.calls) - 1; i >= 0; i-- {
		if f.calls[i].Method == method {
			return f.calls[i]
		}
	}
	return fakeCall{}
}

// TestTruncatedOutputLinksTheLogs: a result whose output was cut carries a
// resource_link to the sandbox's activity log, which keeps more; a whole
// one does not.
func TestTruncatedOutputLinksTheLogs(t *testing.T) {
	for _, truncated := range []bool{true, false} {
		fake := newFake()
		fake.outcome = sandbox.ExecOutcome{SandboxID: fake.info.ID, Result: sandbox.ExecResult{Stdout: "a lot", Truncated: truncated}}
		c := mcpGoClient(t, serve(t, fake, Options{}))
		res := callMCPGo(t, c, "execute_command", map[string]any{"command": "yes | head -c 10M"})
		var links []mcp.ResourceLink
		for _, part := range res.Content {
			if l, ok := part.(mcp.ResourceLink); ok {
				links = append(links, l)
			}
		}
		want := 0
		if truncated {
			want = 1
		}
		if len(links) != want || want == 1 && links[0].URI != "sandtray://sandbox/"+fake.info.ID+"/logs" {
			t.Errorf("truncated=%v: resource links %+v, want %d to the sandbox's logs", truncated, links, want)
		}
	}
}
