package jobs

import (
	"context"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// API is what this part gives the Engine's callers: the background jobs
// (job_status, job_stop, the app's list). Package engine promotes these
// methods, and only these, onto *engine.Engine; the rest of the part's
// exported methods are the engine's centre's to call.
type API interface {
	JobStatus(ctx context.Context, jobID string, since int64) (sandbox.JobStatus, error)
	JobStop(ctx context.Context, jobID string) (sandbox.JobStatus, error)
	Jobs(sandboxID string) []sandbox.JobInfo
}
