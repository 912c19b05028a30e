package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// startTimeout bounds how long Start waits for a Pod to be scheduled, its
// image pulled and its containers started.
const startTimeout = 5 * time.Minute

// removeTimeout bounds how long Remove waits for a deleted Pod to go.
const removeTimeout = time.Minute

// Create makes the sandbox's NetworkPolicy and its Pod (see podSpec) and
// returns its id. The Pod is scheduled at once, but its container does not
// start before Start has copied the agent in. A name another Pod of the
// namespace has fails with sandbox.ErrConflict.
func (c *Client) Create(ctx context.Context, o runtime.CreateOptions) (string, error) {
	op := "create a sandbox from image " + o.Image
	if err := c.ensureNamespace(ctx); err != nil {
		return "", err
	}
	if o.Name != "" {
		if taken, err := c.byName(ctx, o.Name); err != nil {
			return "", err
		} else if taken != "" {
			return "", fmt.Errorf("kubernetes: a sandbox container named %q exists (Pod %s): %w", o.Name, taken, sandbox.ErrConflict)
		}
	}
	id := newID()
	pod, policy, err := c.podSpec(id, o)
	if err != nil {
		return "", err
	}
	if policy != nil {
		if policy, err = c.cs.NetworkingV1().NetworkPolicies(c.ns).Create(ctx, policy, metav1.CreateOptions{}); err != nil {
			return "", wrap(op+": its NetworkPolicy", err)
		}
	}
	created, err := c.cs.CoreV1().Pods(c.ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		if policy != nil {
			_ = c.cs.NetworkingV1().NetworkPolicies(c.ns).Delete(context.WithoutCancel(ctx), id, metav1.DeleteOptions{})
		}
		return "", wrap(op, err)
	}
	if policy != nil {
		// The Pod owns its policy: the cluster removes it with the Pod.
		policy.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: created.Name, UID: created.UID}}
		if _, err := c.cs.NetworkingV1().NetworkPolicies(c.ns).Update(ctx, policy, metav1.UpdateOptions{}); err != nil {
			return "", errors.Join(wrap(op+": own its NetworkPolicy", err), c.Remove(context.WithoutCancel(ctx), id))
		}
	}
	if o.Agent != nil {
		c.mu.Lock()
		c.agents[id] = o.Agent
		c.mu.Unlock()
	}
	return id, nil
}

// byName is the id of the Pod whose container name is name, or "".
func (c *Client) byName(ctx context.Context, name string) (string, error) {
	pods, err := c.cs.CoreV1().Pods(c.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", wrap("list sandboxes", err)
	}
	for _, p := range pods.Items {
		if p.Annotations[annoName] == name && p.DeletionTimestamp == nil {
			return p.Name, nil
		}
	}
	return "", nil
}

// Start waits for Pod id's containers to run and copies the agent in
// through its copier; the sandbox's container, waiting for it, then execs
// it as PID 1. A running sandbox is left as it
// is; one whose Pod has ended cannot start again (sandbox.ErrUnsupported).
func (c *Client) Start(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	pod, err := c.get(ctx, id)
	if err != nil {
		return err
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed || state(pod) == runtime.StateExited {
		return unsupported("start sandbox "+id+" again", "its Pod has ended, and a Pod never restarts; delete it and make a new one")
	}
	copier := hasCopier(pod)
	pod, err = c.waitPod(ctx, pod, func(p *corev1.Pod) (bool, error) {
		if err := podFailed(p); err != nil {
			return false, err
		}
		if !copier || copierDone(p) {
			return state(p) == runtime.StateRunning, nil
		}
		return copierRunning(p) && state(p) == runtime.StateRunning, nil
	})
	if err != nil {
		return fmt.Errorf("kubernetes: start sandbox %s: %w", id, err)
	}
	if copier && !copierDone(pod) {
		if err := c.copyAgent(ctx, pod); err != nil {
			return err
		}
	}
	c.mu.Lock()
	delete(c.agents, id)
	c.mu.Unlock()
	return nil
}

// copyAgent copies the agent through the waiting copier of pod and marks it
// ready; the copier then ends, and the sandbox's container starts it.
func (c *Client) copyAgent(ctx context.Context, pod *corev1.Pod) error {
	c.mu.Lock()
	a := c.agents[pod.Name]
	c.mu.Unlock()
	if a == nil {
		return fmt.Errorf("kubernetes: sandbox %s waits for its agent, but this engine did not make it: delete it: %w", pod.Name, sandbox.ErrConflict)
	}
	tmp := runtime.AgentPath + ".part"
	script := `cat >"$0" && chmod 555 "$0" && mv "$0" "$1" && : >"$2"`
	var stderr strings.Builder
	code, err := c.exec(ctx, pod.Name, copierName, []string{"/bin/sh", "-c", script, tmp, runtime.AgentPath, agentReady},
		strings.NewReader(string(a.Binary)), io.Discard, &stderr)
	if err == nil && code != 0 {
		err = fmt.Errorf("exit %d: %s (the image needs /bin/sh and cat)", code, strings.TrimSpace(stderr.String()))
	}
	if err != nil {
		return fmt.Errorf("kubernetes: copy the agent into sandbox %s: %w", pod.Name, err)
	}
	return nil
}

func hasCopier(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Spec.Containers, func(c corev1.Container) bool { return c.Name == copierName })
}

func copierDone(p *corev1.Pod) bool {
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == copierName {
			return s.State.Terminated != nil && s.State.Terminated.ExitCode == 0
		}
	}
	return false
}

func copierRunning(p *corev1.Pod) bool {
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == copierName {
			return s.State.Running != nil
		}
	}
	return false
}

// podFailed says why a Pod will not run: it ended, or a container of it
// cannot be made (its image cannot be pulled, its config is wrong).
func podFailed(p *corev1.Pod) error {
	if p.DeletionTimestamp != nil {
		return fmt.Errorf("its Pod is being deleted: %w", sandbox.ErrNotFound)
	}
	switch p.Status.Phase {
	case corev1.PodFailed, corev1.PodSucceeded:
		return fmt.Errorf("its Pod ended (%s: %s): %w", p.Status.Phase, cmpOr(p.Status.Message, p.Status.Reason), sandbox.ErrConflict)
	}
	for _, s := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
		if w := s.State.Waiting; w != nil {
			switch w.Reason {
			case "ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull":
				return fmt.Errorf("the node cannot get image %s (%s: %s): import it into the node or make it pullable: %w", s.Image, w.Reason, w.Message, sandbox.ErrNotFound)
			case "CreateContainerConfigError", "CreateContainerError", "RunContainerError":
				return fmt.Errorf("container %s cannot start (%s: %s): %w", s.Name, w.Reason, w.Message, sandbox.ErrInvalid)
			}
		}
		if t := s.State.Terminated; t != nil && (s.Name != copierName || t.ExitCode != 0) {
			return fmt.Errorf("container %s ended (%s, exit %d: %s): %w", s.Name, t.Reason, t.ExitCode, t.Message, sandbox.ErrConflict)
		}
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable {
			return fmt.Errorf("no node can take it (%s): free a node or ask for less memory and CPU: %w", cond.Message, sandbox.ErrUnavailable)
		}
	}
	return nil
}

// waitPod watches pod, from the version given, until cond holds, fails or
// ctx ends; it returns the Pod as it was then.
func (c *Client) waitPod(ctx context.Context, pod *corev1.Pod, cond func(*corev1.Pod) (bool, error)) (*corev1.Pod, error) {
	for {
		if ok, err := cond(pod); err != nil || ok {
			return pod, err
		}
		w, err := c.cs.CoreV1().Pods(c.ns).Watch(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("metadata.name", pod.Name).String(), ResourceVersion: pod.ResourceVersion,
		})
		if err != nil {
			return pod, wrap("watch Pod "+pod.Name, err)
		}
		next, err := func() (*corev1.Pod, error) {
			defer w.Stop()
			for {
				select {
				case <-ctx.Done():
					return nil, fmt.Errorf("waited for Pod %s in vain (%s): %w", pod.Name, describe(pod), ctx.Err())
				case ev, ok := <-w.ResultChan():
					if !ok {
						return nil, nil // the watch timed out: again from the last version
					}
					p, isPod := ev.Object.(*corev1.Pod)
					if ev.Type == watch.Deleted {
						return nil, fmt.Errorf("Pod %s was deleted: %w", pod.Name, sandbox.ErrNotFound)
					}
					if !isPod {
						return nil, nil // an error event (the version expired): read it again
					}
					pod = p
					if ok, err := cond(p); err != nil || ok {
						return p, err
					}
				}
			}
		}()
		if err != nil || next != nil {
			return next, err
		}
		if pod, err = c.get(ctx, pod.Name); err != nil {
			return nil, err
		}
	}
}

// describe is a Pod's phase and its containers' states, for an error.
func describe(p *corev1.Pod) string {
	parts := []string{string(p.Status.Phase)}
	for _, s := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
		switch {
		case s.State.Waiting != nil:
			parts = append(parts, s.Name+" waiting: "+s.State.Waiting.Reason)
		case s.State.Running != nil:
			parts = append(parts, s.Name+" running")
		case s.State.Terminated != nil:
			parts = append(parts, s.Name+" terminated: "+s.State.Terminated.Reason)
		}
	}
	return strings.Join(parts, ", ")
}

// get is the Pod of id: its name, or the container name it carries (as
// Docker takes a container's name for its id).
func (c *Client) get(ctx context.Context, id string) (*corev1.Pod, error) {
	p, err := c.cs.CoreV1().Pods(c.ns).Get(ctx, id, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if named, nerr := c.byName(ctx, id); nerr == nil && named != "" {
			p, err = c.cs.CoreV1().Pods(c.ns).Get(ctx, named, metav1.GetOptions{})
		}
	}
	if err != nil {
		return nil, wrap("sandbox "+id, err)
	}
	return p, nil
}

// Stop fails: a Pod cannot stop and start again (see the package comment).
func (c *Client) Stop(ctx context.Context, id string, timeout time.Duration) error {
	return unsupported("stop a sandbox and start it again", "a Pod never restarts, and deleting it would lose its files; delete the sandbox instead, or leave it running")
}

// Kill ends every process in Pod id, then its agent (PID 1), so the Pod
// ends: it shows as exited, keeps its files on the node until it is
// deleted, and cannot start again. A Pod not running fails with
// sandbox.ErrConflict.
func (c *Client) Kill(ctx context.Context, id string) error {
	pod, err := c.get(ctx, id)
	if err != nil {
		return err
	}
	if state(pod) != runtime.StateRunning {
		return fmt.Errorf("kubernetes: kill sandbox %s: it is not running (%s): %w", id, describe(pod), sandbox.ErrConflict)
	}
	// kill -1 reaches every process but PID 1 and the shell itself; the
	// agent ends on SIGTERM.
	_, err = c.exec(ctx, id, containerName, []string{"/bin/sh", "-c", "kill -KILL -1 2>/dev/null; kill -TERM 1"}, nil, io.Discard, io.Discard)
	if err != nil {
		return fmt.Errorf("kubernetes: kill sandbox %s: %w", id, err)
	}
	return nil
}

// Signal fails: nothing reaches PID 1 from outside a Pod.
func (c *Client) Signal(ctx context.Context, id, sig string) error {
	return unsupported("send "+sig+" to a sandbox's PID 1 from outside", "the API has no way to signal a container")
}

// Remove deletes Pod id and its NetworkPolicy and waits until the Pod is
// gone (its processes ended). One that does not exist counts as removed.
func (c *Client) Remove(ctx context.Context, id string) error {
	c.mu.Lock()
	delete(c.agents, id)
	delete(c.cpu, id)
	c.mu.Unlock()
	if err := c.cs.NetworkingV1().NetworkPolicies(c.ns).Delete(ctx, id, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return wrap("remove sandbox "+id+"'s NetworkPolicy", err)
	}
	pods := c.cs.CoreV1().Pods(c.ns)
	pod, err := pods.Get(ctx, id, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return wrap("remove sandbox "+id, err)
	}
	wctx, cancel := context.WithTimeout(ctx, removeTimeout)
	defer cancel()
	// The watch first, from the version read: the deletion cannot be missed.
	w, err := pods.Watch(wctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", id).String(), ResourceVersion: pod.ResourceVersion})
	if err != nil {
		return wrap("watch sandbox "+id, err)
	}
	defer w.Stop()
	one := int64(1)
	err = pods.Delete(ctx, id, metav1.DeleteOptions{GracePeriodSeconds: &one})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return wrap("remove sandbox "+id, err)
	}
	for {
		select {
		case <-wctx.Done():
			return fmt.Errorf("kubernetes: remove sandbox %s: its Pod is still there (%s): %w", id, describe(pod), wctx.Err())
		case ev, ok := <-w.ResultChan():
			if ev.Type == watch.Deleted {
				return nil
			}
			if p, isPod := ev.Object.(*corev1.Pod); isPod {
				pod = p
			}
			if !ok || ev.Type == watch.Error {
				// The watch ended: see whether the Pod is gone, and
				// wait on the slow way.
				_, err := c.waitPod(wctx, pod, func(*corev1.Pod) (bool, error) { return false, nil })
				if errors.Is(err, sandbox.ErrNotFound) {
					return nil
				}
				return fmt.Errorf("kubernetes: remove sandbox %s: %w", id, err)
			}
		}
	}
}

// Rename changes the container name a Pod carries (an annotation: a Pod's
// own name never changes).
func (c *Client) Rename(ctx context.Context, id, name string) error {
	if taken, err := c.byName(ctx, name); err != nil {
		return err
	} else if taken != "" && taken != id {
		return fmt.Errorf("kubernetes: rename sandbox %s to %q: Pod %s has that name: %w", id, name, taken, sandbox.ErrConflict)
	}
	p, err := c.get(ctx, id)
	if err != nil {
		return err
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, annoName, name)
	_, err = c.cs.CoreV1().Pods(c.ns).Patch(ctx, p.Name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{})
	return wrap("rename sandbox "+id, err)
}

// Inspect describes Pod id as a container.
func (c *Client) Inspect(ctx context.Context, id string) (runtime.Container, error) {
	p, err := c.get(ctx, id)
	if err != nil {
		return runtime.Container{}, err
	}
	return container(p), nil
}

// List lists the Pods carrying every label of labels; all includes those
// not running.
func (c *Client) List(ctx context.Context, want map[string]string, all bool) ([]runtime.Container, error) {
	pods, err := c.cs.CoreV1().Pods(c.ns).List(ctx, metav1.ListOptions{LabelSelector: selector(want)})
	if err != nil {
		return nil, wrap("list sandboxes", err)
	}
	var out []runtime.Container
	for i := range pods.Items {
		p := &pods.Items[i]
		if !matches(p, want) || (!all && state(p) != runtime.StateRunning) {
			continue
		}
		out = append(out, container(p))
	}
	return out, nil
}

// selector selects by those of want that Kubernetes takes as labels.
func selector(want map[string]string) string {
	sel := labels.Set{}
	for k, v := range want {
		if validLabel(k, v) {
			sel[k] = v
		}
	}
	return sel.AsSelector().String()
}

// matches reports whether p carries every label of want, as a label or an
// annotation.
func matches(p *corev1.Pod, want map[string]string) bool {
	have := sandtrayLabels(p)
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// state is a Pod's state in Docker's words: created (scheduled, not yet
// running), running, removing (being deleted), exited.
func state(p *corev1.Pod) runtime.State {
	if p.DeletionTimestamp != nil {
		return runtime.StateRemoving
	}
	switch p.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
		return runtime.StateExited
	case corev1.PodRunning:
		for _, s := range p.Status.ContainerStatuses {
			if s.Name == containerName && s.State.Running != nil {
				return runtime.StateRunning
			}
		}
		return runtime.StateExited
	}
	return runtime.StateCreated
}

// container is Pod p as Inspect and List report it.
func container(p *corev1.Pod) runtime.Container {
	ctr := runtime.Container{
		ID: p.Name, Name: p.Annotations[annoName], Labels: sandtrayLabels(p), State: state(p),
		Created: p.CreationTimestamp.Time, Agent: p.Annotations[annoAgent] != "",
	}
	if n := p.Annotations[annoNetwork]; n != "" {
		ctr.Networks = []string{n}
	}
	for _, s := range p.Spec.Containers {
		if s.Name != containerName {
			continue
		}
		ctr.Image = s.Image
		if s.SecurityContext != nil && s.SecurityContext.ReadOnlyRootFilesystem != nil {
			ctr.ReadOnlyRoot = *s.SecurityContext.ReadOnlyRootFilesystem
		}
	}
	for _, s := range p.Status.ContainerStatuses {
		if s.Name != containerName {
			continue
		}
		ctr.ImageID = s.ImageID
		switch {
		case s.State.Running != nil:
			ctr.StartedAt = s.State.Running.StartedAt.Time
		case s.State.Terminated != nil:
			t := s.State.Terminated
			ctr.StartedAt, ctr.ExitCode, ctr.OOMKilled = t.StartedAt.Time, int(t.ExitCode), t.Reason == "OOMKilled"
		}
	}
	return ctr
}

// Events streams the lifecycle of the Pods with labels, in Docker's words:
// create, start, die (after oom when the kernel killed it for memory) and
// destroy. The watch ends when the API server ends it (minutes); the error
// channel then says so, and the engine watches again.
func (c *Client) Events(ctx context.Context, want map[string]string) (<-chan runtime.Event, <-chan error) {
	events, errs := make(chan runtime.Event, 64), make(chan error, 1)
	go func() {
		defer close(errs)
		defer close(events)
		w, err := c.cs.CoreV1().Pods(c.ns).Watch(ctx, metav1.ListOptions{LabelSelector: selector(want)})
		if err != nil {
			errs <- wrap("watch sandboxes", err)
			return
		}
		defer w.Stop()
		seen := map[string]runtime.State{} // Pod → its last state
		for {
			select {
			case <-ctx.Done():
				errs <- ctx.Err()
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					errs <- fmt.Errorf("kubernetes: the watch of sandboxes ended: %w", sandbox.ErrUnavailable)
					return
				}
				p, isPod := ev.Object.(*corev1.Pod)
				if !isPod {
					errs <- fmt.Errorf("kubernetes: the watch of sandboxes failed (%v): %w", ev.Object, sandbox.ErrUnavailable)
					return
				}
				if !matches(p, want) {
					continue
				}
				for _, action := range actions(ev.Type, seen[p.Name], p) {
					select {
					case events <- runtime.Event{ContainerID: p.Name, Action: action, Time: time.Now()}:
					case <-ctx.Done():
						errs <- ctx.Err()
						return
					}
				}
				if ev.Type == watch.Deleted {
					delete(seen, p.Name)
				} else {
					seen[p.Name] = state(p)
				}
			}
		}
	}()
	return events, errs
}

// actions is what a watch event of p says, given its state before ("" for
// a Pod not seen yet), in Docker's words.
func actions(t watch.EventType, before runtime.State, p *corev1.Pod) []string {
	if t == watch.Deleted {
		return []string{"destroy"}
	}
	now := state(p)
	var out []string
	if t == watch.Added && before == "" && (p.Status.Phase == corev1.PodPending || p.Status.Phase == "") {
		out = append(out, "create")
	}
	if now == before {
		return out
	}
	switch now {
	case runtime.StateRunning:
		out = append(out, "start")
	case runtime.StateExited:
		if container(p).OOMKilled {
			out = append(out, "oom")
		}
		if before != "" {
			out = append(out, "die")
		}
	}
	return out
}

// UpdateLimits resizes Pod id's memory and CPU limits in place (the resize
// subresource; requests follow as at create).
func (c *Client) UpdateLimits(ctx context.Context, id string, memoryMB, milliCPUs int64) error {
	p, err := c.get(ctx, id)
	if err != nil {
		return err
	}
	for i := range p.Spec.Containers {
		ct := &p.Spec.Containers[i]
		if ct.Name != containerName {
			continue
		}
		if memoryMB > 0 {
			ct.Resources.Limits[corev1.ResourceMemory] = *resource.NewQuantity(memoryMB<<20, resource.BinarySI)
			ct.Resources.Requests[corev1.ResourceMemory] = *resource.NewQuantity(min(max(memoryMB/4, 1), memRequestMaxMB)<<20, resource.BinarySI)
		}
		if milliCPUs > 0 {
			milli := milliCPUs
			ct.Resources.Limits[corev1.ResourceCPU] = *resource.NewMilliQuantity(milli, resource.DecimalSI)
			ct.Resources.Requests[corev1.ResourceCPU] = *resource.NewMilliQuantity(max(milli/cpuRequestShare, 10), resource.DecimalSI)
		}
	}
	_, err = c.cs.CoreV1().Pods(c.ns).UpdateResize(ctx, id, p, metav1.UpdateOptions{})
	return wrap("resize sandbox "+id, err)
}

// ConnectNetwork takes a sandbox online: its NetworkPolicy goes (the
// install of packages does this for as long as it runs). Only "bridge" is
// a network here.
func (c *Client) ConnectNetwork(ctx context.Context, id, network string) error {
	if network != sandbox.NetworkBridge {
		return unsupported("connect a sandbox to network "+network, "a Pod has the cluster's network, or none")
	}
	err := c.cs.NetworkingV1().NetworkPolicies(c.ns).Delete(ctx, id, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		err = nil
	}
	return wrap("take sandbox "+id+" online", err)
}

// DisconnectNetwork takes a sandbox offline again: its NetworkPolicy comes
// back.
func (c *Client) DisconnectNetwork(ctx context.Context, id, network string) error {
	if network != sandbox.NetworkBridge {
		return unsupported("disconnect a sandbox from network "+network, "a Pod has the cluster's network, or none")
	}
	p, err := c.get(ctx, id)
	if err != nil {
		return err
	}
	policy := c.denyAll(id, p.Labels)
	policy.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID}}
	_, err = c.cs.NetworkingV1().NetworkPolicies(c.ns).Create(ctx, policy, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		err = nil
	}
	return wrap("take sandbox "+id+" offline", err)
}

// TmpfsMounts are the Pod's memory-backed emptyDirs, sorted.
func (c *Client) TmpfsMounts(ctx context.Context, id string) ([]string, error) {
	p, err := c.get(ctx, id)
	if err != nil {
		return nil, err
	}
	memory := map[string]bool{}
	for _, v := range p.Spec.Volumes {
		if v.EmptyDir != nil && v.EmptyDir.Medium == corev1.StorageMediumMemory {
			memory[v.Name] = true
		}
	}
	var out []string
	for _, ct := range p.Spec.Containers {
		if ct.Name != containerName {
			continue
		}
		for _, m := range ct.VolumeMounts {
			if memory[m.Name] {
				out = append(out, m.MountPath)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}
