//go:build cgo

package host

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/sandtray/sandtray/app/settings"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/ui"
)

// problemOf is why the engine could not start as the app's window shows
// it: Docker unreachable, or a config file the engine refuses. Other
// errors (another engine runs on the state dir) end the app as before:
// nil.
func problemOf(err error, opts Options) *ui.Problem {
	detail := strings.TrimPrefix(err.Error(), "start engine: ") // the title says so
	var cerr configError
	switch {
	case errors.As(err, &cerr):
		path := cmpOr(opts.ConfigPath, ConfigPath())
		pr := &ui.Problem{Title: "Sandtray cannot start: its config file has an error", Detail: detail,
			Hint: "Fix the line shown below in config.toml, save it, then Try again. docs/configuration.md lists every setting."}
		if d, bad := settings.Diagnose(path); bad {
			pr.Config = &ui.ConfigProblem{Path: path, Line: d.Line, Key: d.Key, Suggest: d.Suggest, Text: d.Text}
		}
		return pr
	case errors.Is(err, sandbox.ErrUnavailable):
		pr := &ui.Problem{Title: "Sandtray cannot reach Docker", Detail: detail, RetryEvery: retryEvery,
			Hint: "Sandtray runs your assistants' code in Docker. Start Docker Desktop (on Linux without it, the Docker service: " +
				"sudo systemctl start docker), then Try again."}
		pr.StartDocker = dockerStarter()
		return pr
	}
	return nil
}

// problemWhy is the problem in the words of a JSON-RPC error an assistant
// gets, through sandtray-mcp, for every request while it lasts.
func problemWhy(pr ui.Problem) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s.", pr.Title, strings.TrimSuffix(pr.Detail, "."))
	if c := pr.Config; c != nil && c.Suggest != "" {
		fmt.Fprintf(&b, " Did you mean %s?", c.Suggest)
	}
	if pr.Config != nil {
		b.WriteString(" Ask the user to fix config.toml: the Sandtray window shows the line.")
	} else {
		b.WriteString(" Ask the user to start Docker Desktop (or the Docker service); Sandtray starts as soon as Docker answers.")
	}
	return b.String()
}

// dockerStarter starts Docker Desktop where Sandtray knows how (nil where
// it does not: Docker Engine on Linux is the system's service, started
// with root).
func dockerStarter() func() error {
	switch runtime.GOOS {
	case "darwin":
		return func() error { return exec.Command("open", "-a", "Docker").Run() }
	case "windows":
		exe := filepath.Join(os.Getenv("ProgramFiles"), "Docker", "Docker", "Docker Desktop.exe")
		if _, err := os.Stat(exe); err != nil {
			return nil
		}
		return func() error { return exec.Command(exe).Start() }
	}
	// Docker Desktop for Linux runs as the user's systemd service.
	if exec.Command("systemctl", "--user", "cat", "docker-desktop.service").Run() != nil {
		return nil
	}
	return func() error { return exec.Command("systemctl", "--user", "start", "docker-desktop").Run() }
}
