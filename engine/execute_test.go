package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestExecuteCodeLanguages(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	tests := []struct {
		lang, code, want string
	}{
		{"python", "import sys\nprint(sum(range(10)), sys.version_info[0])", "45 3\n"},
		{"", "print('default is python')", "default is python\n"},
		{"bash", "a=(x y z); echo ${#a[@]} \"$(pwd)\"", "3 /workspace\n"},
		{"javascript", "console.log([1,2,3].map(x => x * 2).join(','))", "2,4,6\n"},
		{"c", "#include <stdio.h>\n#include <math.h>\nint main(){printf(\"%.0f\\n\", sqrt(81.0));return 0;}", "9\n"},
		{"sh", "echo 'it''s' \"quoted\" `echo ok`", "its quoted ok\n"},
	}
	for _, tt := range tests {
		out, err := te.ExecCode(ctx, te.owner, "", sandbox.CodeRequest{Language: tt.lang, Code: tt.code})
		if err != nil {
			t.Errorf("%s: %v", tt.lang, err)
			continue
		}
		if r := out.Result; r.Stdout != tt.want || r.ExitCode != 0 {
			t.Errorf("%s: stdout %q exit %d stderr %q, want %q", tt.lang, r.Stdout, r.ExitCode, r.Stderr, tt.want)
		}
	}
	list, _ := te.List(ctx)
	if len(list) != 1 {
		t.Errorf("calls without sandbox_id made %d sandboxes, want one default sandbox for the session", len(list))
	}
	logs, _ := te.Logs(ctx, list[0].ID, 0)
	if last := logs[len(logs)-1]; last.Tool != "execute_code" || last.Language != "sh" || last.ExitCode == nil || *last.ExitCode != 0 {
		t.Errorf("last activity: %+v", last)
	}
}

func TestExecuteCodeErrors(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	_, err := te.ExecCode(ctx, te.owner, id, sandbox.CodeRequest{Language: "cobol", Code: "x"})
	wantKind(t, err, sandbox.ErrInvalid)
	_, err = te.ExecCode(ctx, te.owner, id, sandbox.CodeRequest{Language: "ruby", Code: "puts 1"})
	wantKind(t, err, sandbox.ErrUnsupported)
	if !strings.Contains(err.Error(), "no ruby runtime") {
		t.Errorf("missing runtime message: %v", err)
	}
	out, err := te.ExecCode(ctx, te.owner, id, sandbox.CodeRequest{Language: "c", Code: "int main( {"})
	if err != nil || out.Result.ExitCode == 0 || !strings.Contains(out.Result.Stderr, "error") {
		t.Errorf("compile error should be a result with the compiler's message: %+v, %v", out.Result, err)
	}
	out, _ = te.ExecCode(ctx, te.owner, id, sandbox.CodeRequest{Code: "raise SystemExit(3)"})
	if out.Result.ExitCode != 3 {
		t.Errorf("exit code: %d, want 3", out.Result.ExitCode)
	}
	_, err = te.ExecCode(ctx, te.owner, "no-such-sandbox", sandbox.CodeRequest{Code: "1"})
	wantKind(t, err, sandbox.ErrNotFound)
	_, err = te.ExecCode(ctx, te.owner, id, sandbox.CodeRequest{Code: "1", Timeout: 24 * time.Hour})
	wantKind(t, err, sandbox.ErrInvalid)
}

func TestExecuteCommand(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	out, err := te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{
		Command: "mkdir -p /tmp/w && cd /tmp/w && pwd; echo oops >&2; read line; echo got:$line:$FOO; exit 4",
		Env:     map[string]string{"FOO": "bar"}, Stdin: "hello\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	r := out.Result
	if r.Stdout != "/tmp/w\ngot:hello:bar\n" || r.Stderr != "oops\n" || r.ExitCode != 4 || r.TimedOut || r.Truncated {
		t.Errorf("result %+v", r)
	}
	out, _ = te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "pwd", Workdir: "sub"})
	if out.Result.ExitCode == 0 {
		t.Errorf("a missing workdir should fail: %+v", out.Result)
	}
	te.command(t, id, "mkdir sub")
	out, _ = te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "pwd", Workdir: "sub"})
	if out.Result.Stdout != "/workspace/sub\n" {
		t.Errorf("workdir: %+v", out.Result)
	}
}

// TestTimeoutKillsProcessGroup: a command that never ends is stopped at its
// timeout, with everything it started.
func TestTimeoutKillsProcessGroup(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	out, err := te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{
		Command: "echo started; sleep 300 & sleep 301", Timeout: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	r := out.Result
	if !r.TimedOut || r.Stdout != "started\n" || !strings.Contains(r.Stderr, "timed out after 1s") {
		t.Errorf("result %+v, want timed_out with the output so far", r)
	}
	if r.Duration > 10*time.Second {
		t.Errorf("took %s for a 1s timeout", r.Duration)
	}
	eventually(t, 5*time.Second, "sleep processes survived the timeout", func() bool {
		return te.command(t, id, "ps -eo args | grep -c '^sleep 30[01]' || true").Stdout == "0\n"
	})
}

// TestOutputFlood: a command that prints forever returns capped output and
// keeps more in the activity log, within its timeout.
func TestOutputFlood(t *testing.T) {
	te := newTestEngine(t, func(c *config.Config) { c.Limits.OutputBytes = 1000; c.Limits.LogOutputBytes = 5000 })
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	out, err := te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "yes", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if r := out.Result; !r.Truncated || !r.TimedOut || len(r.Stdout) != 1000 {
		t.Errorf("truncated %v timed_out %v stdout %d bytes; want capped at 1000", r.Truncated, r.TimedOut, len(r.Stdout))
	}
	logs, _ := te.Logs(ctx, id, 1)
	if len(logs[0].Stdout) != 5000 {
		t.Errorf("activity log kept %d bytes, want 5000", len(logs[0].Stdout))
	}
	out, _ = te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: `printf 'ok\377\033[31m'`})
	if out.Result.Stdout != "ok\uFFFD" {
		t.Errorf("invalid UTF-8 should become U+FFFD and the colour escape go: %q", out.Result.Stdout)
	}
}

func TestCancelKillsExec(t *testing.T) {
	te := newTestEngine(t)
	id := te.create(t, sandbox.CreateRequest{}).ID
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "sleep 302"})
	if err == nil {
		t.Fatal("a cancelled call should return an error")
	}
	eventually(t, 5*time.Second, "the cancelled exec kept running", func() bool {
		return te.command(t, id, "ps -eo args | grep -c '^sleep 302' || true").Stdout == "0\n"
	})
}

func TestBackgroundJobs(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	out, err := te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "echo one; sleep 0.5; echo two >&2; exit 7", Background: true})
	if err != nil || out.JobID == "" {
		t.Fatalf("background start: %+v, %v", out, err)
	}
	var st sandbox.JobStatus
	var all string
	var since int64
	eventually(t, 10*time.Second, "job did not finish", func() bool {
		st, err = te.JobStatus(ctx, out.JobID, since)
		if err != nil {
			t.Fatal(err)
		}
		all += st.Output
		since = st.NextOffset
		return st.Status != sandbox.JobRunning
	})
	if st.Status != sandbox.JobExited || st.ExitCode == nil || *st.ExitCode != 7 || all != "one\ntwo\n" {
		t.Errorf("finished job %+v, output %q", st, all)
	}
	logs, _ := te.Logs(ctx, id, 2)
	if len(logs) != 2 || !strings.Contains(logs[0].Stdout, out.JobID) || logs[1].ExitCode == nil || *logs[1].ExitCode != 7 {
		t.Errorf("activity for a job: %+v; want its start (naming the job) and its result", logs)
	}
	long, _ := te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "sleep 303", Background: true})
	st, err = te.JobStop(ctx, long.JobID)
	if err != nil || st.Status != sandbox.JobStopped {
		t.Errorf("job_stop: %+v, %v", st, err)
	}
	if n := te.command(t, id, "ps -eo args | grep -c '^sleep 303' || true").Stdout; n != "0\n" {
		t.Errorf("stopped job still running (%s)", n)
	}
	_, err = te.JobStatus(ctx, "job-nope", 0)
	wantKind(t, err, sandbox.ErrNotFound)
}
