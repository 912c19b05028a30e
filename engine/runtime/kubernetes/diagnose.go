package kubernetes

import (
	"context"
	"fmt"
	"strings"

	authv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Finding is one line of `sandtray doctor` about the cluster.
type Finding struct {
	Level  int // 0 works, 1 for information, 2 a warning, 3 Sandtray cannot work
	Topic  string
	Detail string
	Fix    string // what to do, for a warning or a failure
}

// The levels of a Finding (those of app/doctor).
const (
	FindingOK = iota
	FindingInfo
	FindingWarn
	FindingFail
)

// permissions are what the engine does in its namespace: the verbs it
// needs on each resource, and whether a sandbox cannot work without them.
var permissions = []struct {
	resource, sub, group string
	verbs                []string
	needed               bool
	what                 string
}{
	{"pods", "", "", []string{"create", "get", "list", "watch", "delete", "patch"}, true, "make, follow and remove sandboxes"},
	{"pods", "exec", "", []string{"create"}, true, "run anything in a sandbox"},
	{"networkpolicies", "", "networking.k8s.io", []string{"create", "update", "delete"}, false, "cut sandboxes off the network"},
}

// Diagnose checks the cluster o names as `sandtray doctor` reports it:
// whether it answers, what the user may do in the namespace, the
// RuntimeClass, the metrics API and the image. It creates nothing but the
// access reviews the API answers.
func Diagnose(ctx context.Context, o Options, image string) []Finding {
	c, err := connect(ctx, o, false)
	if err != nil {
		return []Finding{{FindingFail, "cluster", strings.TrimPrefix(err.Error(), "kubernetes: "),
			"check kubernetes.kubeconfig and kubernetes.context in config.toml (kubectl --context … get nodes must answer)"}}
	}
	ep := c.Endpoint()
	version, _ := c.ServerVersion(ctx)
	out := []Finding{{FindingOK, "cluster", fmt.Sprintf("%s, %s (%s)", ep.Host, version, ep.Source), ""}}
	if _, err := c.cs.CoreV1().Namespaces().Get(ctx, c.ns, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		out = append(out, Finding{FindingInfo, "namespace", c.ns + ": not there yet; the engine creates it at its start", ""})
	}
	out = append(out, c.checkPermissions(ctx)...)
	if rc := o.RuntimeClass; rc != "" {
		_, err := c.cs.NodeV1().RuntimeClasses().Get(ctx, rc, metav1.GetOptions{})
		switch {
		case err == nil:
			out = append(out, Finding{FindingOK, "runtime", fmt.Sprintf("sandboxes run with RuntimeClass %q", rc), ""})
		case apierrors.IsNotFound(err):
			out = append(out, Finding{FindingFail, "runtime", fmt.Sprintf("kubernetes.runtime_class is %q, which the cluster does not have", rc),
				"install it (gVisor: runsc and a RuntimeClass with handler runsc) or clear kubernetes.runtime_class"})
		default:
			out = append(out, Finding{FindingWarn, "runtime", fmt.Sprintf("cannot read RuntimeClass %q: %v", rc, err), "let the user read runtimeclasses"})
		}
	} else {
		out = append(out, Finding{FindingInfo, "runtime", "no RuntimeClass set: the cluster's default runtime (kubernetes.runtime_class = \"gvisor\" for a user-space kernel)", ""})
	}
	if _, err := c.cs.CoreV1().RESTClient().Get().AbsPath("/apis/metrics.k8s.io/v1beta1").DoRaw(ctx); err != nil {
		out = append(out, Finding{FindingInfo, "metrics", "no metrics.k8s.io API: CPU and memory figures come from each sandbox's cgroup, over an exec per sample", "install metrics-server to spare those execs"})
	} else {
		out = append(out, Finding{FindingOK, "metrics", "metrics.k8s.io answers: CPU and memory figures come from it", ""})
	}
	if image != "" {
		has, err := c.ImageExists(ctx, image)
		switch {
		case err != nil:
			out = append(out, Finding{FindingWarn, "image", fmt.Sprintf("%s: the nodes' images cannot be read (%v)", image, err), "let the user list nodes"})
		case has:
			out = append(out, Finding{FindingOK, "image", image + ": on a node", ""})
		default:
			out = append(out, Finding{FindingWarn, "image", image + ": on no node: the kubelet must pull it at the first sandbox",
				"push it to a registry the nodes pull from, or import it into the nodes (ctr -n k8s.io images import)"})
		}
	}
	return out
}

// checkPermissions asks the API (SelfSubjectAccessReview) whether the
// user may do what the engine does in the namespace.
func (c *Client) checkPermissions(ctx context.Context) []Finding {
	var missing, optional []string
	for _, p := range permissions {
		for _, verb := range p.verbs {
			r, err := c.cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authv1.SelfSubjectAccessReview{
				Spec: authv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authv1.ResourceAttributes{
					Namespace: c.ns, Verb: verb, Group: p.group, Resource: p.resource, Subresource: p.sub}},
			}, metav1.CreateOptions{})
			if err != nil {
				return []Finding{{FindingWarn, "access", fmt.Sprintf("cannot ask what the user may do in namespace %s: %v", c.ns, err), "check the user's access"}}
			}
			if r.Status.Allowed {
				continue
			}
			name := verb + " " + p.resource
			if p.sub != "" {
				name += "/" + p.sub
			}
			if p.needed {
				missing = append(missing, name+" (to "+p.what+")")
			} else {
				optional = append(optional, name+" (to "+p.what+")")
			}
		}
	}
	var out []Finding
	if len(missing) > 0 {
		out = append(out, Finding{FindingFail, "access", fmt.Sprintf("in namespace %s the user may not %s", c.ns, strings.Join(missing, ", ")),
			"grant them with a Role and RoleBinding in the namespace (docs/kubernetes.md has one)"})
	}
	if len(optional) > 0 {
		out = append(out, Finding{FindingWarn, "access", fmt.Sprintf("in namespace %s the user may not %s: sandboxes keep the cluster's network", c.ns, strings.Join(optional, ", ")),
			"grant them (docs/kubernetes.md has the Role)"})
	}
	if len(out) == 0 {
		out = append(out, Finding{FindingOK, "access", fmt.Sprintf("namespace %s: the user may make, exec into and remove sandboxes and their NetworkPolicies", c.ns), ""})
	}
	return out
}
