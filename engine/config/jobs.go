package config

import (
	"fmt"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// JobLimits are the [limits] keys that bound background jobs: how many run
// at once, and the output the engine keeps for them (docs/security.md F32).
type JobLimits struct {
	MaxJobs      int `toml:"max_jobs"`       // running jobs per sandbox
	MaxJobsTotal int `toml:"max_jobs_total"` // running jobs per engine
	// JobOutputMemoryBytes bounds the output of every job (and of every
	// call that may become one) held in the engine's memory together.
	JobOutputMemoryBytes int64 `toml:"job_output_memory_bytes"`
	// JobOutputDiskBytes bounds what is spilled to the state dir past it;
	// 0 spills nothing (the rest is dropped, and job_status says so).
	JobOutputDiskBytes int64 `toml:"job_output_disk_bytes"`
}

// Defaults: 16 jobs per sandbox and 64 in all; 32 MiB of job output in
// memory and 256 MiB spilled.
const (
	defaultMaxJobs         = 16
	defaultMaxJobsTotal    = 64
	defaultJobOutputMemory = 32 << 20
	defaultJobOutputDisk   = 256 << 20
	maxMaxJobsTotal        = 4096
	minJobOutputMemory     = 1 << 20
)

func defaultJobLimits() JobLimits {
	return JobLimits{MaxJobs: defaultMaxJobs, MaxJobsTotal: defaultMaxJobsTotal,
		JobOutputMemoryBytes: defaultJobOutputMemory, JobOutputDiskBytes: defaultJobOutputDisk}
}

// check names the first bad key.
func (l JobLimits) check() error {
	switch {
	case l.MaxJobs < 1 || l.MaxJobs > maxMaxJobsTotal:
		return fmt.Errorf("limits.max_jobs must be 1 to %d: %w", maxMaxJobsTotal, sandbox.ErrInvalid)
	case l.MaxJobsTotal < l.MaxJobs || l.MaxJobsTotal > maxMaxJobsTotal:
		return fmt.Errorf("limits.max_jobs_total must be at least limits.max_jobs and at most %d: %w", maxMaxJobsTotal, sandbox.ErrInvalid)
	case l.JobOutputMemoryBytes < minJobOutputMemory:
		return fmt.Errorf("limits.job_output_memory_bytes must be at least %d (1 MiB): %w", minJobOutputMemory, sandbox.ErrInvalid)
	case l.JobOutputDiskBytes < 0:
		return fmt.Errorf("limits.job_output_disk_bytes must be 0 (spill nothing) or more: %w", sandbox.ErrInvalid)
	}
	return nil
}
