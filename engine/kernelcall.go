package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// kernelGrace is how long interrupted code has to stop before its kernel is
// killed, and how long a killed kernel has to exit before it is killed from
// outside.
const kernelGrace = 2 * time.Second

// outputsDir is where code writes images to get them back, relative to the
// sandbox's workdir.
const outputsDir = "outputs"

// kernelEnd is how a run on a kernel ended, as far as the engine is concerned.
type kernelEnd int

const (
	endDone        kernelEnd = iota // it finished by itself (or the interpreter exited)
	endInterrupted                  // it stopped when interrupted
	endKilled                       // it ignored the interrupt; the kernel was killed
)

// runKernel runs code on the sandbox's kernel for lang, starting one when
// needed. ok is false when the image cannot run a kernel, and the caller
// should take the exec path.
func (e *Engine) runKernel(ctx context.Context, b *box, lang language, req sandbox.CodeRequest, timeout time.Duration, out *callOutput) (res runOutput, ok bool, err error) {
	ks := e.kernels()
	s := ks.slot(b.id, lang.name)
	if err := s.lock(ctx, timeout, lang.name+" kernel of sandbox "+b.name); err != nil {
		return runOutput{}, true, err
	}
	defer s.unlock()
	k, restarted, err := ks.get(ctx, e, b, s, lang.name, req.Reset)
	if errors.Is(err, errNoKernel) {
		return runOutput{}, false, nil
	}
	if err != nil {
		return runOutput{}, true, err
	}
	started := time.Now()
	c := &kernelCall{id: randomHex(8), out: out, done: make(chan kernelDone, 1)}
	k.setCall(c)
	d, end := e.awaitKernel(ctx, b, k, c, e.kernelRequest(b, c.id, req.Code, out), timeout)
	k.setCall(nil)
	if end == endKilled || d.exited || d.lost != nil {
		ks.setKernel(s, nil, true)
	}
	if ctx.Err() != nil && end != endDone {
		return runOutput{}, true, fmt.Errorf("execution cancelled: %w", ctx.Err())
	}
	out.dropped(d.DroppedOut, d.DroppedErr)
	r := sandbox.ExecResult{ExitCode: d.Exit, Duration: time.Since(started), TimedOut: end != endDone,
		KernelRestarted: restarted, Images: c.images}
	res = out.result(r, e.cfg.Limits.OutputBytes, e.cfg.Limits.LogOutputBytes)
	kernelNotes(&res, lang.name, d, end, timeout, restarted)
	return res, true, nil
}

func (e *Engine) kernelRequest(b *box, id, code string, out *callOutput) []byte {
	keep := e.cfg.Limits.LogOutputBytes
	if out.combined != nil {
		keep = max(keep, jobOutputKept)
	}
	req, _ := json.Marshal(kernelRequest{ID: id, Code: code, Cap: keep + 1,
		OutDir: path.Join(b.spec.Workdir, outputsDir), MaxImage: e.cfg.Limits.MaxImageBytes})
	return req
}

// awaitKernel sends the run and waits for its end. At the timeout, or when
// ctx is done, it interrupts the code, and kills the kernel if the code does
// not stop within kernelGrace.
func (e *Engine) awaitKernel(ctx context.Context, b *box, k *kernel, c *kernelCall, req []byte, timeout time.Duration) (kernelDone, kernelEnd) {
	if err := k.send(frameRun, req); err != nil {
		return kernelDone{Exit: -1, lost: err}, endDone
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case d := <-c.done:
		return d, endDone
	case <-timer.C:
	case <-ctx.Done():
	}
	_ = k.send(frameInterrupt, nil)
	grace := time.NewTimer(kernelGrace)
	defer grace.Stop()
	select {
	case d := <-c.done:
		return d, endInterrupted
	case <-grace.C:
	}
	k.kill(e, b)
	return kernelDone{Exit: -1}, endKilled
}

// kernelNotes tells the model, in stderr, what happened to the kernel.
func kernelNotes(res *runOutput, lang string, d kernelDone, end kernelEnd, timeout time.Duration, restarted bool) {
	const lost = "its state (variables, imports, functions) is lost, and the next call starts a fresh kernel"
	if restarted {
		res.note(fmt.Sprintf("the previous %s kernel of this sandbox had stopped, so this ran in a fresh one: state from earlier calls is gone", lang))
	}
	switch {
	case d.exited:
		res.note(fmt.Sprintf("the %s kernel exited with code %d: %s", lang, d.Exit, lost))
	case d.lost != nil:
		res.note(fmt.Sprintf("the %s kernel stopped unexpectedly (%v): %s", lang, d.lost, lost))
	case end == endInterrupted:
		res.note(fmt.Sprintf("timed out after %s; the code was interrupted (SIGINT) and the kernel kept its state", timeout))
	case end == endKilled:
		res.note(fmt.Sprintf("timed out after %s and did not stop within %s of an interrupt, so the kernel was killed: %s", timeout, kernelGrace, lost))
	}
}
