//go:build linux

// Package agent is sandtray-agent, the program the engine puts in every
// sandbox (read-only, at AgentPath, where no user inside can change it):
// PID 1, which reaps orphans, and the server of the sandbox's one session
// (package wire) through which the engine runs processes, moves files and
// carries connections without a container exec per operation. The same
// binary has subcommands the engine runs with a plain exec where it must
// not depend on the session: the timeout's tree kill, the install's freeze
// and thaw, the disk watch's kill, a process wrapper for other users, and
// readers of package databases.
//
// It runs where the model's code runs, as the sandbox's user: it holds no
// secret and no right the model lacks, and the engine trusts nothing it
// says beyond the sandbox (see package wire). It makes itself not dumpable,
// so that no process of its uid can trace it or open its file descriptors.
package agent

import (
	"fmt"
	"io"
	"syscall"
)

// Main runs the agent as args (os.Args) ask and returns its exit status.
func Main(args []string, stdin io.ReadCloser, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	notDumpable()
	switch cmd, rest := args[1], args[2:]; cmd {
	case "init":
		return runInit(stdin, stdout)
	case "serve":
		return serveStdio(stdin, stdout)
	case "run":
		return runWrapped(rest, stdin, stdout, stderr)
	case "kill":
		return killCmd(rest, stdout, stderr)
	case "freeze":
		return freezeCmd(stdout)
	case "thaw":
		return thawCmd(rest, stdout)
	case "killwriters":
		return killWritersCmd(rest, stdout, stderr)
	case "versions":
		return versionsCmd(rest, stdout, stderr)
	case "dpkgreport":
		return dpkgReportCmd(rest, stdout)
	case "which":
		return whichCmd(rest, stdout)
	case "oom":
		return oomCmd(stdout)
	case "stat", "tarout", "tarin", "emptydir":
		return fileCmd(cmd, rest, stdin, stdout, stderr)
	case "removeall":
		return removeAllCmd(rest, stderr)
	case "trustca":
		return trustCACmd(rest, stdin, stderr)
	default:
		fmt.Fprintf(stderr, "sandtray-agent: unknown command %q\n%s\n", cmd, usage)
		return 2
	}
}

const usage = `usage: sandtray-agent init | serve | run [--marker K] -- ARGV... | kill [--marker K] [PGID...]
       | freeze | thaw PID START... | killwriters [SPARE...] | versions MANAGER NAME... | dpkgreport PKG... | which [--path=P] NAME...
       | oom | stat PATH | tarout PATH | tarin DIR | emptydir DIR | removeall PATH... | trustca FILE BUNDLE`

// notDumpable keeps other processes of the agent's uid from tracing it and
// from opening its file descriptors (/proc/PID/fd): its stdin and stdout
// are the engine's session.
func notDumpable() {
	const prSetDumpable = 4
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0)
}

// exitCode is how a process's wait status reads in a shell: its code, or
// 128 + the signal that ended it.
func exitCode(ws syscall.WaitStatus) (code, sig int) {
	switch {
	case ws.Exited():
		return ws.ExitStatus(), 0
	case ws.Signaled():
		return 128 + int(ws.Signal()), int(ws.Signal())
	}
	return -1, 0
}

// agentEnvPath is the PATH the agent's subcommands look programs up in:
// never the sandbox's own.
const agentEnvPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

func fail(w io.Writer, format string, a ...any) int {
	fmt.Fprintf(w, "sandtray-agent: "+format+"\n", a...)
	return 1
}
