package kernel

import (
	"context"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Grace is how long interrupted code has to stop before its kernel is
// killed, and how long a killed kernel has to exit before it is killed from
// outside.
const Grace = sandbox.KernelGrace

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

// Run runs code on t's kernel for lang, starting one when needed (a fresh
// one with reset). ok is false when the image cannot run a kernel, and the
// caller should take the exec path.
func (ks *Set) Run(ctx context.Context, t sandbox.Handle, lang, code string, reset bool, timeout time.Duration, out *run.Output) (res run.Result, ok bool, err error) {
	s := ks.slot(t.ID(), lang)
	if err := s.lock(ctx, timeout, lang+" kernel of sandbox "+t.Name()); err != nil {
		return run.Result{}, true, err
	}
	defer s.unlock()
	k, restarted, err := ks.get(ctx, t, s, lang, reset)
	if errors.Is(err, ErrUnavailable) {
		return run.Result{}, false, nil
	}
	if err != nil {
		return run.Result{}, true, err
	}
	started := time.Now()
	c := &kernelCall{id: sandbox.RandomHex(8), out: out, done: make(chan kernelDone, 1)}
	k.setCall(c)
	d, end := k.await(ctx, c, ks.request(t, c.id, code, out), timeout)
	k.setCall(nil)
	if end == endKilled || d.exited || d.lost != nil {
		ks.setKernel(s, nil, true)
	}
	if ctx.Err() != nil && end != endDone {
		return run.Result{}, true, fmt.Errorf("execution cancelled: %w", ctx.Err())
	}
	out.Dropped(d.DroppedOut, d.DroppedErr)
	r := sandbox.ExecResult{ExitCode: d.Exit, Duration: time.Since(started), TimedOut: end != endDone,
		KernelRestarted: restarted, Images: c.images, Outcome: outcome(lang, d, end, timeout, restarted)}
	res = out.Result(r, ks.limits.OutputBytes, ks.limits.LogOutputBytes)
	return res, true, nil
}

func (ks *Set) request(t sandbox.Handle, id, code string, out *run.Output) []byte {
	keep := ks.limits.LogOutputBytes
	if out.Combined() != nil {
		keep = max(keep, run.JobOutputKept)
	}
	return kernelRequest{ID: id, Code: code, Cap: keep + 1,
		OutDir: path.Join(t.Workdir(), outputsDir), MaxImage: ks.limits.MaxImageBytes}.encode()
}

// await sends the run and waits for its end. At the timeout, or when
// ctx is done, it interrupts the code, and kills the kernel if the code does
// not stop within Grace.
func (k *kernel) await(ctx context.Context, c *kernelCall, req []byte, timeout time.Duration) (kernelDone, kernelEnd) {
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
	grace := time.NewTimer(Grace)
	defer grace.Stop()
	select {
	case d := <-c.done:
		return d, endInterrupted
	case <-grace.C:
	}
	k.kill(ctx)
	return kernelDone{Exit: -1}, endKilled
}

// outcome says what happened to the kernel, for the call's notes.
func outcome(lang string, d kernelDone, e kernelEnd, timeout time.Duration, restarted bool) sandbox.Outcome {
	o := sandbox.Outcome{Language: lang, FreshKernel: restarted, Timeout: timeout}
	switch {
	case d.exited:
		o.Kernel, o.KernelExit = sandbox.KernelExited, d.Exit
	case d.lost != nil:
		o.Kernel, o.KernelCause = sandbox.KernelLost, d.lost.Error()
	case e == endInterrupted:
		o.End, o.Kernel = sandbox.TimedOut, sandbox.KernelInterrupted
	case e == endKilled:
		o.End, o.Kernel = sandbox.TimedOut, sandbox.KernelKilled
	}
	return o
}
