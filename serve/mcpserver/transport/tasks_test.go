package transport

import (
	"testing"
)

func TestTaskCancelledBeforeItsRunStartsNeverRuns(t *testing.T) {
	runs := newTaskRuns()
	runs.cancel("t1") // tasks/cancel overtook the handler
	ctx, done := runs.start(t.Context(), "t1", "s")
	defer done()
	if ctx.Err() == nil {
		t.Error("a task cancelled before its run started runs anyway")
	}
	other, done2 := runs.start(t.Context(), "t2", "s")
	defer done2()
	runs.endSession("s")
	if other.Err() == nil {
		t.Error("the end of a session left its task running")
	}
}
