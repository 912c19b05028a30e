package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// ExecCommand runs a shell command (/bin/sh -c) in the sandbox ref, or in the
// session's default sandbox when ref is "" (created on first use).
func (e *Engine) ExecCommand(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.CommandRequest) (sandbox.ExecOutcome, error) {
	if strings.TrimSpace(req.Command) == "" {
		return sandbox.ExecOutcome{}, fmt.Errorf("command is empty; give a shell command such as \"ls -la\": %w", sandbox.ErrInvalid)
	}
	timeout, err := e.timeoutFor(req.Timeout, req.Background)
	if err != nil {
		return sandbox.ExecOutcome{}, err
	}
	for k := range req.Env {
		if !validEnvKey.MatchString(k) {
			return sandbox.ExecOutcome{}, fmt.Errorf("env name %q is not valid: %w", k, sandbox.ErrInvalid)
		}
	}
	b, err := e.target(ctx, owner, ref, "")
	if err != nil {
		return sandbox.ExecOutcome{}, err
	}
	cmd := req.Command
	env := envList(req.Env)
	if req.Workdir != "" {
		env = append(env, "SANDTRAY_CWD="+sandboxPath(b, req.Workdir))
		cmd = "cd -- \"$SANDTRAY_CWD\" || exit 1\n" + cmd
	}
	r := run{cmd: []string{"/bin/sh", "-c", cmd}, env: env, workdir: b.spec.Workdir, timeout: timeout}
	if req.Stdin != "" {
		r.stdin = strings.NewReader(req.Stdin)
	}
	act := sandbox.Activity{Tool: "execute_command", Client: owner.Client, Input: req.Command}
	return e.dispatch(ctx, b, r, act, req.Background, nil)
}

// ExecCode runs a snippet in the given language (python by default).
func (e *Engine) ExecCode(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.CodeRequest) (sandbox.ExecOutcome, error) {
	lang, err := languageFor(req.Language)
	if err != nil {
		return sandbox.ExecOutcome{}, err
	}
	if strings.TrimSpace(req.Code) == "" {
		return sandbox.ExecOutcome{}, fmt.Errorf("code is empty; pass the %s source to run: %w", lang.name, sandbox.ErrInvalid)
	}
	timeout, err := e.timeoutFor(req.Timeout, req.Background)
	if err != nil {
		return sandbox.ExecOutcome{}, err
	}
	b, err := e.target(ctx, owner, ref, lang.name)
	if err != nil {
		return sandbox.ExecOutcome{}, err
	}
	r := run{cmd: []string{"/bin/sh", "-c", lang.codeScript()}, workdir: b.spec.Workdir,
		stdin: strings.NewReader(req.Code), timeout: timeout}
	act := sandbox.Activity{Tool: "execute_code", Client: owner.Client, Language: lang.name, Input: req.Code}
	return e.dispatch(ctx, b, r, act, req.Background, &lang)
}

// dispatch runs r now, or as a background job, and logs the activity.
func (e *Engine) dispatch(ctx context.Context, b *box, r run, act sandbox.Activity, background bool, lang *language) (sandbox.ExecOutcome, error) {
	if background {
		return e.startJob(b, r, act)
	}
	defer e.release(b)
	out, err := e.execute(ctx, b, r)
	if err == nil && lang != nil && out.result.ExitCode == missingRuntime {
		err = fmt.Errorf("image %s has no %s runtime (looked for %s); create a sandbox with an image that has it (create_sandbox image=...), or install it with execute_command: %w",
			b.spec.Image, lang.name, strings.Join(lang.runtimes, ", "), sandbox.ErrUnsupported)
	}
	e.logRun(b.id, act, out, err)
	if err != nil {
		return sandbox.ExecOutcome{}, err
	}
	if out.result.TimedOut {
		e.notify(b.id, "Command timed out", fmt.Sprintf("%s in %s ran past its %s timeout and was killed.", act.Tool, b.name, r.timeout))
	}
	return sandbox.ExecOutcome{SandboxID: b.id, Result: out.result}, nil
}

func (e *Engine) logRun(id string, act sandbox.Activity, out runOutput, err error) {
	if err != nil {
		act.Error = err.Error()
	} else {
		code := out.result.ExitCode
		act.ExitCode = &code
		act.Duration = out.result.Duration.Milliseconds()
		act.Stdout, act.Stderr, act.TimedOut = out.logOut, out.logErr, out.result.TimedOut
	}
	e.record(id, act)
}

// target acquires ref (see acquire), or the session's default sandbox when
// ref is "", creating that on first use with the image for language.
func (e *Engine) target(ctx context.Context, owner sandbox.Owner, ref, language string) (*box, error) {
	if ref != "" {
		return e.acquire(ref)
	}
	e.defaultMu.Lock() // one default sandbox per session, even for concurrent first calls
	defer e.defaultMu.Unlock()
	e.mu.Lock()
	s := e.sessions[owner.Session]
	if s != nil && s.defaultBox != "" {
		if _, ok := e.boxes[s.defaultBox]; ok {
			e.mu.Unlock()
			return e.acquire(s.defaultBox)
		}
	}
	e.mu.Unlock()
	info, err := e.Create(ctx, owner, sandbox.CreateRequest{Language: language}, nil)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	if s := e.sessions[owner.Session]; s != nil {
		s.defaultBox = info.ID
	}
	e.mu.Unlock()
	return e.acquire(info.ID)
}
