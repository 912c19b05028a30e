// Package k8stest holds the tests that need a real Kubernetes cluster: they
// build only with the k8s build tag, so client-go is linked into nothing
// else, and run against the cluster whose kubeconfig SANDTRAY_K8S_KUBECONFIG
// names (make test-k8s starts a single node for them and sets it).
package k8stest
