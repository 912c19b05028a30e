package config

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/homedir"
)

// Runtime is the [runtime] section: which container runtime runs the
// sandboxes.
type Runtime struct {
	// Name is "docker" (Docker or Podman's Docker API; the default when
	// empty) or "kubernetes" (a cluster, see [kubernetes]).
	Name string `toml:"name"`
}

// The runtimes runtime.name may name.
const (
	RuntimeDocker     = "docker"
	RuntimeKubernetes = "kubernetes"
)

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

// dnsLabel is a Kubernetes namespace or RuntimeClass name (RFC 1123 label).
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// check validates [runtime] and [kubernetes], naming the key.
func (c Config) checkRuntime() error {
	if !slices.Contains([]string{"", RuntimeDocker, RuntimeKubernetes}, c.Runtime.Name) {
		return fmt.Errorf("runtime.name %q must be %q or %q: %w", c.Runtime.Name, RuntimeDocker, RuntimeKubernetes, sandbox.ErrInvalid)
	}
	k := c.Kubernetes
	if k.Namespace != "" && !dnsLabel.MatchString(k.Namespace) {
		return fmt.Errorf("kubernetes.namespace %q must be a Kubernetes namespace name (lower-case letters, digits and '-', at most 63): %w", k.Namespace, sandbox.ErrInvalid)
	}
	if k.RuntimeClass != "" && !dnsLabel.MatchString(k.RuntimeClass) {
		return fmt.Errorf("kubernetes.runtime_class %q must be a RuntimeClass name such as \"gvisor\": %w", k.RuntimeClass, sandbox.ErrInvalid)
	}
	return nil
}

// RuntimeName is the runtime to connect to: runtime.name, "docker" when empty.
func (c Config) RuntimeName() string {
	if c.Runtime.Name == "" {
		return RuntimeDocker
	}
	return c.Runtime.Name
}

// RuntimeHost is what runtime.Connect is given for RuntimeName: docker.host
// for Docker; for Kubernetes the [kubernetes] section as
// "kubernetes:?kubeconfig=…&context=…&namespace=…&runtime_class=…", which
// engine/runtime/kubernetes reads (ParseHost).
func (c Config) RuntimeHost() string {
	if c.RuntimeName() != RuntimeKubernetes {
		return c.Docker.Host
	}
	q := url.Values{}
	k := c.Kubernetes
	for key, v := range map[string]string{"kubeconfig": homedir.Expand(k.Kubeconfig), "context": k.Context, "namespace": k.Namespace, "runtime_class": k.RuntimeClass} {
		if v != "" {
			q.Set(key, v)
		}
	}
	return RuntimeKubernetes + ":?" + q.Encode()
}
