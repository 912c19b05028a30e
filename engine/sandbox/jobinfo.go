package sandbox

// JobInfo is a background job as the app's Jobs view lists it: its state
// (JobStatus without output; follow the output with job_status's offsets)
// and what started it.
type JobInfo struct {
	JobStatus
	SandboxName string
	Tool        string // execute_code or execute_command
	Language    string // execute_code's language
	Command     string // the code or command, as the activity log keeps it
	Client      string // the MCP client that started it
}
