package ui

import (
	"strings"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// defaultDockerHost is the endpoint the docker CLI uses with no -H.
const defaultDockerHost = "unix:///var/run/docker.sock"

// shellScript starts bash when the image has it (history, line editing),
// else sh. A failed exec would end sh, hence the check first.
const shellScript = "command -v bash >/dev/null && exec bash; exec sh"

// ExecArgs is the docker command that opens an interactive shell in a
// sandbox as its user, in its workdir, on the Docker the engine uses.
func ExecArgs(info sandbox.Info, dockerHost string) []string {
	args := []string{"docker"}
	if dockerHost != "" && dockerHost != defaultDockerHost {
		args = append(args, "-H", dockerHost)
	}
	args = append(args, "exec", "-it")
	if info.Spec.User != "" {
		args = append(args, "-u", info.Spec.User)
	}
	if info.Spec.Workdir != "" {
		args = append(args, "-w", info.Spec.Workdir)
	}
	return append(args, ShortID(info.ID), "sh", "-c", shellScript)
}

// ExecCommand is ExecArgs as a line to paste into a POSIX shell.
func ExecCommand(info sandbox.Info, dockerHost string) string {
	args := ExecArgs(info, dockerHost)
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	return strings.Join(quoted, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@,+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
