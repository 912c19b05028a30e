package transport

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/server"
)

// MCP tasks (protocol 2025-11-25): a client that declares the tasks
// capability may send a tool that supports tasks (execute_code and the like)
// with a "task" parameter; the reply is a task id at once, and the client follows
// it with tasks/get, tasks/result and tasks/cancel. mcp-go keeps the task
// table and answers those; this file makes the runs behind them right.
//
// mcp-go v1.2.1 runs a task's handler on the context of the request that
// created it, which every transport cancels as soon as that request is
// answered (the socket when the reply is written, HTTP when the POST
// returns, SSE when the handler returns): the task would be cancelled the
// moment it started. So a task's run gets a context of its own, detached
// from the request's, that ends when tasks/cancel names the task (mcp-go's
// OnTaskCancelled hook) or when its session ends. To find the run that hook
// names, each request's context carries a taskSlot, which mcp-go's
// OnTaskCreated hook fills with the task id on the request's goroutine
// before it starts the handler. A tool handler takes its run's context from
// Server.TaskRun.

// taskSlot receives the id of the task a request created.
type taskSlot struct{ id atomic.Pointer[string] }

type taskSlotKey struct{}

// withTaskSlot gives a request's context an empty slot.
func withTaskSlot(ctx context.Context) context.Context {
	return context.WithValue(ctx, taskSlotKey{}, &taskSlot{})
}

// taskIDOf returns the id of the task the request created, "" if none.
func taskIDOf(ctx context.Context) string {
	if slot, ok := ctx.Value(taskSlotKey{}).(*taskSlot); ok {
		if id := slot.id.Load(); id != nil {
			return *id
		}
	}
	return ""
}

// taskRuns are the runs of live tasks.
type taskRuns struct {
	mu   sync.Mutex
	runs map[string]*taskRun // by task id; guarded by mu
	// early holds tasks cancelled before their run started (a tasks/cancel
	// that overtook the handler's goroutine), so that the run starts
	// cancelled; guarded by mu, and bounded by maxEarly.
	early map[string]bool
}

// maxEarly bounds taskRuns.early; past it the oldest entries do not matter
// (their runs started long ago or never will) and it is emptied.
const maxEarly = 1024

type taskRun struct {
	session string
	cancel  context.CancelFunc
}

func newTaskRuns() *taskRuns {
	return &taskRuns{runs: make(map[string]*taskRun), early: make(map[string]bool)}
}

// hooks returns mcp-go's task hooks that feed the table.
func (t *taskRuns) hooks() *server.TaskHooks {
	h := &server.TaskHooks{}
	h.AddOnTaskCreated(func(ctx context.Context, m server.TaskMetrics) {
		if slot, ok := ctx.Value(taskSlotKey{}).(*taskSlot); ok {
			slot.id.Store(&m.TaskID)
		}
	})
	h.AddOnTaskCancelled(func(_ context.Context, m server.TaskMetrics) { t.cancel(m.TaskID) })
	return h
}

// start returns the context for task id's run, carrying ctx's values but
// not its cancellation, and the function to call when the run is over.
func (t *taskRuns) start(ctx context.Context, id, session string) (context.Context, func()) {
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	run := &taskRun{session: session, cancel: cancel}
	t.mu.Lock()
	t.runs[id] = run
	if t.early[id] {
		delete(t.early, id)
		cancel()
	}
	t.mu.Unlock()
	return runCtx, func() {
		cancel()
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.runs[id] == run {
			delete(t.runs, id)
		}
	}
}

// cancel stops task id's run, if it is still going.
func (t *taskRuns) cancel(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if run := t.runs[id]; run != nil {
		run.cancel()
		return
	}
	if len(t.early) >= maxEarly {
		clear(t.early)
	}
	t.early[id] = true
}

// endSession stops the runs of a session's tasks ("": of stateless clients).
func (t *taskRuns) endSession(session string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, run := range t.runs {
		if run.session == session {
			run.cancel()
		}
	}
}
