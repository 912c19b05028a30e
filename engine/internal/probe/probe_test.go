package probe

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// fakeDaemon answers ServerVersion with err, or version 27.0.
type fakeDaemon struct{ err error }

func (d *fakeDaemon) ServerVersion(context.Context) (string, error) {
	if d.err != nil {
		return "", d.err
	}
	return "27.0", nil
}
func (d *fakeDaemon) Endpoint() runtime.Endpoint {
	return runtime.Endpoint{Host: "unix:///fake.sock", Source: "the test", Why: "set explicitly"}
}

// TestWatchNotices: a notice when Docker goes away or comes back, never at
// the first check; a plain change otherwise.
func TestWatchNotices(t *testing.T) {
	d := &fakeDaemon{}
	var got []string
	w := NewWatch(d, func(title, _ string) { got = append(got, title) }, func() { got = append(got, "changed") })
	ctx := context.Background()
	steps := []struct {
		err  error
		want string
	}{
		{nil, "changed"}, {nil, "changed"}, {errors.New("down"), "Docker went away"},
		{errors.New("down"), "changed"}, {nil, "Docker is back"},
	}
	for i, s := range steps {
		d.err = s.err
		if ok := w.Check(ctx); ok != (s.err == nil) {
			t.Errorf("step %d: Check = %v", i, ok)
		}
		if last := got[len(got)-1]; len(got) != i+1 || last != s.want {
			t.Errorf("step %d: calls %v, want %q last", i, got, s.want)
		}
	}
	if st := w.Status(); !st.Connected || st.Version != "27.0" || st.HostSource != "the test: set explicitly" || st.Host != "unix:///fake.sock" || st.Error != "" {
		t.Errorf("Status = %+v", st)
	}
	d.err = errors.New("down")
	w.Check(ctx)
	if st := w.Status(); st.Connected || !strings.Contains(st.Error, "systemctl start docker") {
		t.Errorf("Status when down = %+v", st)
	}
}

// fakeGPUs is a Docker host with the given GPU method, listing containers.
type fakeGPUs struct {
	method string
	list   []runtime.Container
}

func (f fakeGPUs) GPUSupport(context.Context) (runtime.GPUSupport, error) {
	return runtime.GPUSupport{Method: f.method, Detail: "no nvidia runtime"}, nil
}

func (f fakeGPUs) List(context.Context, map[string]string, bool) ([]runtime.Container, error) {
	return f.list, nil
}

func TestCheckGPUs(t *testing.T) {
	ctx := context.Background()
	none, nvidia := fakeGPUs{}, fakeGPUs{method: runtime.GPUNvidia}
	for _, c := range []struct {
		g    config.GPU
		d    fakeGPUs
		gpus string
		kind error
	}{
		{config.GPU{Allow: true}, none, "", nil},
		{config.GPU{Allow: true}, nvidia, "all", nil},
		{config.GPU{Allow: true, Max: 2}, nvidia, "2", nil},
		{config.GPU{}, nvidia, "1", sandbox.ErrForbidden},
		{config.GPU{Allow: true, Max: 2}, nvidia, "all", sandbox.ErrForbidden},
		{config.GPU{Allow: true, Max: 2}, nvidia, "3", sandbox.ErrForbidden},
		{config.GPU{Allow: true}, none, "1", sandbox.ErrUnsupported},
	} {
		err := CheckGPUs(ctx, c.g, c.d, sandbox.Spec{GPUs: c.gpus})
		if c.kind == nil && err != nil || c.kind != nil && !errors.Is(err, c.kind) {
			t.Errorf("CheckGPUs(%+v, method %q, gpus %q) = %v, want %v", c.g, c.d.method, c.gpus, err, c.kind)
		}
	}
	if st := GPUs(ctx, nvidia); !st.Available || st.Method != runtime.GPUNvidia {
		t.Errorf("GPUs with nvidia = %+v", st)
	}
}

func TestGPUHolders(t *testing.T) {
	d := fakeGPUs{list: []runtime.Container{
		{Name: "b", Labels: map[string]string{sandbox.LabelName: "beta", sandbox.LabelSpec: `{"gpus":"all"}`}},
		{Name: "a", Labels: map[string]string{sandbox.LabelSpec: `{"gpus":"1"}`}},
		{Name: "c", Labels: map[string]string{sandbox.LabelSpec: `{"gpus":"0"}`}},
		{Name: "d", Labels: map[string]string{}},
	}}
	got, err := GPUHolders(context.Background(), d)
	if want := []string{"a (1)", "beta (all)"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("GPUHolders = %v, %v; want %v", got, err, want)
	}
}
