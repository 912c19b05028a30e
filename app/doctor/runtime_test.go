package doctor

import (
	"context"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/runtime/fakeruntime"
)

// coreOnly is a runtime with none of the optional parts.
type coreOnly struct{ runtime.Runtime }

func init() {
	runtime.Register("doctor-core", func(ctx context.Context, host string) (runtime.Runtime, error) {
		rt := fakeruntime.New()
		rt.SetName("doctor-core")
		return coreOnly{rt}, nil
	})
}

// TestDoctorSaysWhichRuntimeAndWhere: the runtime line names the runtime
// [runtime] name chose, where it answered, and what it cannot do; a name no
// runtime has fails, listing those there are.
func TestDoctorSaysWhichRuntimeAndWhere(t *testing.T) {
	ctx := context.Background()
	cfg := config.Default()
	cfg.Runtime.Name = "doctor-core"
	e := &Env{Config: cfg, Docker: engine.ProbeDocker(ctx, cfg)}
	lines := checkRuntime(ctx, e)
	if lines[0].Level != OK || !strings.Contains(lines[0].Detail, "doctor-core ([runtime] name in config.toml), at "+fakeruntime.Host) {
		t.Errorf("runtime line: %+v", lines[0])
	}
	var lacks []string
	for _, l := range lines[1:] {
		lacks = append(lacks, l.Detail)
	}
	if all := strings.Join(lacks, "\n"); len(lines) != 1+len(runtime.AllCapabilities) || !strings.Contains(all, `the "doctor-core" runtime cannot diff or commit`) {
		t.Errorf("what the runtime cannot do:\n%s", all)
	}
	if got := checkDocker(ctx, e); len(got) != 0 {
		t.Errorf("a docker line for another runtime: %+v", got)
	}

	cfg.Runtime.Name = "no-such-runtime"
	e = &Env{Config: cfg, Docker: engine.ProbeDocker(ctx, cfg)}
	got := checkRuntime(ctx, e)[0]
	if got.Level != Fail || !strings.Contains(got.Detail, `"no-such-runtime"`) || !strings.Contains(got.Detail, `"doctor-core"`) {
		t.Errorf("an unknown runtime: %+v, want FAIL naming it and the runtimes there are", got)
	}
}
