package config

import (
	"fmt"
	"net/url"
	"regexp"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/homedir"
)

// DefaultRuntime is the container runtime an empty [runtime] name chooses.
const DefaultRuntime = "docker"

// RuntimeKubernetes is the runtime.name of a Kubernetes cluster, whose
// [kubernetes] section says which (docs/kubernetes.md).
const RuntimeKubernetes = "kubernetes"

// Runtime is the [runtime] section: which container runtime runs the
// sandboxes, and where it is.
type Runtime struct {
	// Name is the runtime, as its package registers it (engine/runtime):
	// "docker" (Docker, and Podman through its Docker API) unless a program
	// links in another ("kubernetes"). Empty means DefaultRuntime.
	Name string `toml:"name"`
	// Host is where the runtime is, in its own terms; for "docker" an
	// address as docker.host takes. Empty: [docker] host, which older files
	// set, then the runtime finds itself (for Docker: DOCKER_HOST, the
	// current docker context, the known sockets); for "kubernetes", the
	// [kubernetes] section.
	Host string `toml:"host"`
}

// Kubernetes is the [kubernetes] section: the cluster sandboxes run on
// when runtime.name is "kubernetes" (docs/kubernetes.md).
type Kubernetes struct {
	// Kubeconfig is the kubeconfig file ("~/" is the home folder); empty:
	// KUBECONFIG, then ~/.kube/config, then the cluster Sandtray runs in.
	Kubeconfig string `toml:"kubeconfig"`
	// Context is the kubeconfig's context to use; empty: its current one.
	Context string `toml:"context"`
	// Namespace is where sandboxes go, created when missing: "sandtray"
	// when empty.
	Namespace string `toml:"namespace"`
	// RuntimeClass is the Pods' RuntimeClass ("gvisor", say); empty: the
	// cluster's default.
	RuntimeClass string `toml:"runtime_class"`
}

var runtimeName = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// dnsLabel is a Kubernetes namespace or RuntimeClass name (RFC 1123 label).
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// RuntimeName is the runtime the configuration chooses.
func (c Config) RuntimeName() string {
	if c.Runtime.Name == "" {
		return DefaultRuntime
	}
	return c.Runtime.Name
}

// RuntimeHost is where the configuration puts the runtime: [runtime] host,
// else, for Kubernetes, the [kubernetes] section as
// "kubernetes:?kubeconfig=…&context=…&namespace=…&runtime_class=…" (which
// engine/runtime/kubernetes reads, ParseHost), else [docker] host (files
// written before [runtime] existed), else "" (the runtime finds itself).
func (c Config) RuntimeHost() string {
	if c.Runtime.Host != "" {
		return c.Runtime.Host
	}
	if c.RuntimeName() == RuntimeKubernetes {
		q := url.Values{}
		k := c.Kubernetes
		for key, v := range map[string]string{"kubeconfig": homedir.Expand(k.Kubeconfig), "context": k.Context, "namespace": k.Namespace, "runtime_class": k.RuntimeClass} {
			if v != "" {
				q.Set(key, v)
			}
		}
		return RuntimeKubernetes + ":?" + q.Encode()
	}
	return c.Docker.Host
}

// check validates the [runtime] section with the [docker] one, naming the key.
func (r Runtime) check(d Docker) error {
	if r.Name != "" && !runtimeName.MatchString(r.Name) {
		return fmt.Errorf("runtime.name %q must be a runtime's name such as \"docker\" (lower-case letters, digits, - and _): %w",
			r.Name, sandbox.ErrInvalid)
	}
	if r.Host != "" && d.Host != "" && r.Host != d.Host {
		return fmt.Errorf("runtime.host %q and docker.host %q disagree: keep runtime.host and remove docker.host: %w",
			r.Host, d.Host, sandbox.ErrInvalid)
	}
	if r.Name == "" || r.Name == DefaultRuntime {
		if err := checkDockerHost("runtime.host", r.Host); err != nil {
			return err
		}
	}
	return nil
}

// check validates the [kubernetes] section, naming the key.
func (k Kubernetes) check() error {
	if k.Namespace != "" && !dnsLabel.MatchString(k.Namespace) {
		return fmt.Errorf("kubernetes.namespace %q must be a Kubernetes namespace name (lower-case letters, digits and '-', at most 63): %w", k.Namespace, sandbox.ErrInvalid)
	}
	if k.RuntimeClass != "" && !dnsLabel.MatchString(k.RuntimeClass) {
		return fmt.Errorf("kubernetes.runtime_class %q must be a RuntimeClass name such as \"gvisor\": %w", k.RuntimeClass, sandbox.ErrInvalid)
	}
	return nil
}
