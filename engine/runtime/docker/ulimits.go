package docker

import (
	"github.com/moby/moby/api/types/container"
)

// Every sandbox's open-file and process limits, soft = hard so code in the
// sandbox cannot raise them. Set explicitly rather than left to the runtime:
// Podman's Docker-compatible API otherwise asks for nofile 1048576, above
// many hosts' hard limit, and every create fails ("error setting rlimit
// type 7"); Docker's default (the daemon's own, often 1048576) is also far
// more than a sandbox needs. 4096 open files is what a build or a test
// suite uses; nproc counts every process of the sandbox user's uid on the
// host kernel (root is exempt), so it is set well above the pids limit,
// which is what bounds one sandbox.
const (
	NoFileLimit = 4096
	NProcLimit  = 8192
)

// sandboxUlimits are the nofile and nproc limits every sandbox gets.
func sandboxUlimits() []*container.Ulimit {
	return []*container.Ulimit{
		{Name: "nofile", Soft: NoFileLimit, Hard: NoFileLimit},
		{Name: "nproc", Soft: NProcLimit, Hard: NProcLimit},
	}
}
