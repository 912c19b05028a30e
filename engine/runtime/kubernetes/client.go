package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/klog/v2"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Name is the runtime's name for runtime.Connect.
const Name = "kubernetes"

// DefaultNamespace is where sandboxes go when the config names none.
const DefaultNamespace = "sandtray"

// Options say which cluster, and how sandboxes are made on it.
type Options struct {
	Kubeconfig   string // a kubeconfig file; "" for KUBECONFIG, then ~/.kube/config, then in-cluster
	Context      string // a context of the kubeconfig; "" for its current one
	Namespace    string // where sandboxes go; "" for DefaultNamespace
	RuntimeClass string // the Pods' runtimeClassName ("gvisor"); "" for the cluster's default
}

// Host is o as the host string runtime.Connect passes to this runtime's
// connector: kubernetes:?kubeconfig=…&context=…&namespace=…&runtime_class=….
func (o Options) Host() string {
	q := url.Values{}
	for k, v := range map[string]string{"kubeconfig": o.Kubeconfig, "context": o.Context, "namespace": o.Namespace, "runtime_class": o.RuntimeClass} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return Name + ":?" + q.Encode()
}

// ParseHost is Host undone; "" is the defaults.
func ParseHost(host string) (Options, error) {
	if host == "" {
		return Options{}, nil
	}
	rest, ok := strings.CutPrefix(host, Name+":")
	if !ok {
		return Options{}, fmt.Errorf("kubernetes: %q is not a cluster address (want kubernetes:?kubeconfig=PATH&context=NAME&namespace=NS): %w", host, sandbox.ErrInvalid)
	}
	q, err := url.ParseQuery(strings.TrimPrefix(rest, "?"))
	if err != nil {
		return Options{}, fmt.Errorf("kubernetes: %q: %v: %w", host, err, sandbox.ErrInvalid)
	}
	for k := range q {
		switch k {
		case "kubeconfig", "context", "namespace", "runtime_class":
		default:
			return Options{}, fmt.Errorf("kubernetes: unknown setting %q in %q (known: kubeconfig, context, namespace, runtime_class): %w", k, host, sandbox.ErrInvalid)
		}
	}
	return Options{Kubeconfig: q.Get("kubeconfig"), Context: q.Get("context"), Namespace: q.Get("namespace"), RuntimeClass: q.Get("runtime_class")}, nil
}

// Client is the Kubernetes runtime. It is safe for concurrent use.
type Client struct {
	cfg  *rest.Config // nil with a fake clientset (unit tests): no exec
	cs   kubernetes.Interface
	ns   string
	opts Options
	ep   runtime.Endpoint

	mu        sync.Mutex
	agents    map[string]*runtime.Agent // pod id → the agent Start copies in (set by Create)
	nsReady   bool
	cpu       map[string]*cpuAcc // pod id → its CPU time so far (stats.go)
	noMetrics bool               // the cluster has no metrics API: stats read cgroups (stats.go)

	// execs, when set, stands in for the cluster's exec (unit tests).
	execs func(id, ctr string, cmd []string) remotecommand.Executor
}

// pingTimeout bounds the first request to the cluster.
const pingTimeout = 15 * time.Second

// Connect reaches the cluster o names, checks that it answers, and makes
// sure its namespace exists (creating it when it may).
func Connect(ctx context.Context, o Options) (*Client, error) { return connect(ctx, o, true) }

// connect is Connect; the namespace is made only when ensure is set.
func connect(ctx context.Context, o Options, ensure bool) (*Client, error) {
	quietKlog()
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	source := "KUBECONFIG, else ~/.kube/config"
	if o.Kubeconfig != "" {
		rules.ExplicitPath = o.Kubeconfig
		source = "kubernetes.kubeconfig"
	}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.Context})
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, &runtime.NoEngineError{Err: fmt.Errorf("kubernetes: no cluster to use (%s): %v; set kubernetes.kubeconfig and kubernetes.context "+
			"in config.toml, or KUBECONFIG: %w", source, err, sandbox.ErrUnavailable)}
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	cfg.UserAgent = "sandtray"
	// client-go's default (5 a second, bursts of 10) throttles an engine
	// that follows a few sandboxes: its calls queued behind the stats.
	cfg.QPS, cfg.Burst = 100, 200
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: client for %s: %v: %w", cfg.Host, err, sandbox.ErrInvalid)
	}
	ctxName := o.Context
	if ctxName == "" {
		if raw, err := loader.RawConfig(); err == nil {
			ctxName = raw.CurrentContext
		}
	}
	c := newClient(cs, cfg, o, runtime.Endpoint{Host: cfg.Host, Source: fmt.Sprintf("%s, context %q, namespace %q", source, ctxName, o.Namespace),
		Why: "set explicitly"})
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if _, err := c.version(pctx); err != nil {
		return nil, &runtime.NoEngineError{Tried: []runtime.Tried{{Host: cfg.Host, Source: source, Cause: err.Error()}},
			Pinned: source, Err: fmt.Errorf("kubernetes: the cluster at %s (context %q) does not answer: %v; is it up, and is the kubeconfig's "+
				"context the one you mean? %w", cfg.Host, ctxName, err, sandbox.ErrUnavailable)}
	}
	if !ensure {
		return c, nil
	}
	if err := c.ensureNamespace(pctx); err != nil {
		return nil, err
	}
	return c, nil
}

// quietKlog keeps client-go's own log (klog, to stderr) out of the
// engine's: it reports a stream the engine closed on purpose (a session
// that ends, a copy read to its end) as an error. What fails reaches the
// engine as an error anyway.
func quietKlog() {
	klogOnce.Do(func() {
		klog.SetSlogLogger(slog.New(slog.DiscardHandler))
	})
}

var klogOnce sync.Once

// newClient is a Client over cs (a fake one in unit tests, with no cfg).
func newClient(cs kubernetes.Interface, cfg *rest.Config, o Options, ep runtime.Endpoint) *Client {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	return &Client{cfg: cfg, cs: cs, ns: o.Namespace, opts: o, ep: ep, agents: map[string]*runtime.Agent{}}
}

// ensureNamespace makes sure the sandboxes' namespace exists, creating it
// (labelled as Sandtray's) when missing.
func (c *Client) ensureNamespace(ctx context.Context) error {
	c.mu.Lock()
	ready := c.nsReady
	c.mu.Unlock()
	if ready {
		return nil
	}
	_, err := c.cs.CoreV1().Namespaces().Get(ctx, c.ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = c.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.ns,
			Labels: map[string]string{sandbox.LabelManaged: "true"}}}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
	}
	if apierrors.IsForbidden(err) {
		// May be fine: the user can work in the namespace without
		// reading namespaces. The first Pod's create says if not.
		err = nil
	}
	if err != nil {
		return wrap(fmt.Sprintf("namespace %s (create it with kubectl create namespace %s, or set kubernetes.namespace)", c.ns, c.ns), err)
	}
	c.mu.Lock()
	c.nsReady = true
	c.mu.Unlock()
	return nil
}

// Namespace is where this client makes sandboxes.
func (c *Client) Namespace() string { return c.ns }

// Clientset is the client-go clientset (for doctor's checks and tests).
func (c *Client) Clientset() kubernetes.Interface { return c.cs }

// Close releases nothing: client-go's connections close with the process.
func (c *Client) Close() error { return nil }

// Endpoint is the cluster's API server, with the kubeconfig's context and
// the namespace.
func (c *Client) Endpoint() runtime.Endpoint { return c.ep }

// version asks the API server its version, within ctx.
func (c *Client) version(ctx context.Context) (*version.Info, error) {
	rc := c.cs.Discovery().RESTClient()
	if rc == nil || reflect.ValueOf(rc).IsNil() { // a fake clientset's
		return c.cs.Discovery().ServerVersion()
	}
	raw, err := rc.Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	var v version.Info
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("the API server's /version: %w", err)
	}
	return &v, nil
}

// ServerVersion is the API server's version, e.g. "v1.37.2 (Kubernetes)".
func (c *Client) ServerVersion(ctx context.Context) (string, error) {
	v, err := c.version(ctx)
	if err != nil {
		return "", wrap("server version", err)
	}
	return v.GitVersion + " (Kubernetes)", nil
}

// Daemon describes the cluster: Product "Kubernetes", the API server's
// version, the RuntimeClasses it has.
func (c *Client) Daemon(ctx context.Context) (runtime.DaemonInfo, error) {
	v, err := c.version(ctx)
	if err != nil {
		return runtime.DaemonInfo{}, wrap("server version", err)
	}
	info := runtime.DaemonInfo{Version: v.GitVersion, API: v.Major + "." + v.Minor, Product: "Kubernetes"}
	if rcs, err := c.cs.NodeV1().RuntimeClasses().List(ctx, metav1.ListOptions{}); err == nil {
		for _, rc := range rcs.Items {
			info.Runtimes = append(info.Runtimes, rc.Name)
		}
	}
	return info, nil
}

// Platform is the OS and architecture of the cluster's first Ready node
// (the agent given to sandboxes is built for it).
func (c *Client) Platform(ctx context.Context) (string, string, error) {
	nodes, err := c.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", "", wrap("list nodes", err)
	}
	for _, n := range nodes.Items {
		if nodeReady(&n) {
			return n.Status.NodeInfo.OperatingSystem, n.Status.NodeInfo.Architecture, nil
		}
	}
	return "", "", fmt.Errorf("kubernetes: no node is Ready: %w", sandbox.ErrUnavailable)
}

func nodeReady(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Name is the runtime's name: "kubernetes".
func (c *Client) Name() string { return Name }

// SetPullLimit does nothing: the kubelet pulls, not Sandtray.
func (c *Client) SetPullLimit(int64) {}

// wrap gives err the kind of engine/sandbox its API status says, with op.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var kind error
	switch {
	case apierrors.IsNotFound(err):
		kind = sandbox.ErrNotFound
	case apierrors.IsAlreadyExists(err), apierrors.IsConflict(err):
		kind = sandbox.ErrConflict
	case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err):
		kind = sandbox.ErrForbidden
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		kind = sandbox.ErrInvalid
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("kubernetes: %s: %w", op, err)
	default:
		kind = sandbox.ErrUnavailable
	}
	return fmt.Errorf("kubernetes: %s: %w (%w)", op, kind, err)
}

// unsupported is what Kubernetes cannot do.
func unsupported(what, why string) error {
	return fmt.Errorf("kubernetes cannot %s: %s: %w", what, why, sandbox.ErrUnsupported)
}

// The Kubernetes runtime.
var _ runtime.Runtime = (*Client)(nil)

func init() {
	runtime.Register(Name, func(ctx context.Context, host string) (runtime.Runtime, error) {
		o, err := ParseHost(host)
		if err != nil {
			return nil, err
		}
		c, err := Connect(ctx, o)
		if err != nil {
			return nil, err // not a nil *Client in a non-nil Runtime
		}
		return c, nil
	})
}
