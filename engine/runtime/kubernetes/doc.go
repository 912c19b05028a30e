// Package kubernetes is Sandtray's container runtime on a Kubernetes
// cluster, through client-go: the engine/runtime.Runtime a program gets with
// runtime.Connect(ctx, "kubernetes", host), host being what Host makes of the
// config's [kubernetes] section (kubeconfig, context, namespace,
// runtime_class).
//
// # A sandbox is a Pod
//
// Each sandbox is one Pod, named by its id (32 hex digits), in a namespace
// Sandtray owns ("sandtray" unless configured; created when missing). It is
// a plain Pod and not kubernetes-sigs/agent-sandbox's Sandbox: that CRD and
// its controller are on few clusters, and what Sandtray needs of a sandbox
// (one long-lived container it execs into, deleted by the engine that made
// it) is what a Pod is; a Sandbox adds a Service, a PVC template and
// hibernation, which the engine does not use, on top of the same Pod.
//
// The Pod carries the hardening Kubernetes can express (see podSpec): every
// capability dropped (cap_add given back), no privilege escalation,
// seccomp RuntimeDefault, runAsNonRoot with the uid and gid when the
// sandbox's user is a numeric non-root one (sandbox.user, or the strict
// profile's 1000:1000), a read-only root in the strict profile with
// size-limited memory-backed emptyDirs where Docker has tmpfs, memory and
// CPU requests equal to their limits, an ephemeral-storage limit from
// limits.disk_mb, no service-account token, no service links, restart policy
// Never, and the RuntimeClass the config names (gVisor's, say). A pids limit
// is the kubelet's podPidsLimit: a Pod cannot ask for one of its own. Beside
// it, a NetworkPolicy selecting only that Pod denies all ingress and egress
// (the engine reaches the sandbox through the API server's exec, which no
// policy governs); "bridge" sandboxes get none. The policy is owned by the
// Pod, so the cluster removes it with the Pod even if the engine does not.
//
// Sandtray's labels are kept twice: all of them as annotations (a label
// value cannot hold a spec's JSON, a time or an image reference), and those
// whose values Kubernetes accepts as labels too, which List and Events select
// by; the rest is matched on the annotations.
//
// # The agent
//
// The agent (package agent) is PID 1 of the sandbox's container, at
// runtime.AgentPath on an emptyDir mounted read-only there. A second
// container of the sandbox's own image, the copier, as hardened as the
// sandbox, has the same emptyDir writable and waits; Start copies the agent
// into it over one exec (`sh -c 'cat >…'`: the image needs a POSIX shell and
// cat) and marks it ready, the copier ends, and the sandbox's container,
// whose shell waited for the mark, execs the agent. The copier starts beside
// the sandbox's container, not before it as an init container would: the
// kubelet sees a container end only at its next relist, a second later. The
// engine's session with the agent is one exec stream of `agent serve` per
// sandbox (ExecStream), so no call pays an API-server exec; file copies
// (CopyTo, CopyFrom, StatPath) are the agent's tar and stat subcommands
// over an exec.
//
// Exec and ExecStream go through the API server's exec over WebSocket,
// falling back to SPDY only when the WebSocket upgrade itself is refused
// (remotecommand.NewFallbackExecutor with httpstream.IsUpgradeFailure, as
// kubectl does: falling back on any error would run a command that exits
// non-zero a second time).
//
// # What stop means, and what Kubernetes cannot do
//
// A Pod cannot be stopped and started again. Stop fails with
// sandbox.ErrUnsupported, saying so: deleting the Pod would silently lose
// the sandbox's files. Kill ends every process in the Pod and then the
// agent, so the Pod ends (its files stay on the node until it is deleted)
// and shows as exited; starting it again fails with sandbox.ErrUnsupported.
// Pause and unpause, signals to PID 1 from outside, diffs and commits of the
// writable layer, image builds, imports, tags and removals, and the writable
// layer's size fail with sandbox.ErrUnsupported naming "kubernetes". Images
// are the nodes': ImageExists looks in the nodes' image lists, and PullImage
// leaves the pull to the kubelet (imagePullPolicy IfNotPresent).
//
// Stats come from the metrics.k8s.io API (metrics-server) where the cluster
// has it; without it from the container's own cgroup files, read over an
// exec. Events come from a watch on the namespace's Pods.
package kubernetes
