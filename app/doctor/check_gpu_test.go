package doctor

import (
	"context"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestGPUCheck(t *testing.T) {
	none := sandbox.GPUStatus{Detail: "the Docker host has no GPU runtime"}
	yes := sandbox.GPUStatus{Available: true, Method: "nvidia", Detail: "the Docker daemon has the nvidia runtime"}
	tests := []struct {
		name    string
		gpu     sandbox.GPUStatus
		allow   bool
		def     string
		holders []string
		want    []Level
		says    string
	}{
		{"no GPUs, none asked for", none, true, "", nil, []Level{Info}, "no GPUs on this Docker host"},
		{"GPUs", yes, true, "", []string{"train (all)"}, []Level{OK, Info}, "holding GPUs: train (all)"},
		{"every sandbox gets GPUs the host lacks", none, true, "1", nil, []Level{Fail}, "gpu.default"},
		{"turned off", yes, false, "", nil, []Level{Info}, "gpu.allow = false"},
	}
	for _, tc := range tests {
		e := &Env{Config: engine.DefaultConfig(), Docker: engine.DockerProbe{Version: "20.10", GPU: tc.gpu, GPUHolders: tc.holders}}
		e.Config.GPU.Allow, e.Config.GPU.Default = tc.allow, tc.def
		lines := checkGPU(context.Background(), e)
		var got []Level
		var text strings.Builder
		for _, l := range lines {
			got = append(got, l.Level)
			text.WriteString(l.Detail + " " + l.Fix + "\n")
		}
		if len(got) != len(tc.want) || got[0] != tc.want[0] || got[len(got)-1] != tc.want[len(tc.want)-1] {
			t.Errorf("%s: levels %v, want %v (%s)", tc.name, got, tc.want, text.String())
		}
		if !strings.Contains(text.String(), tc.says) {
			t.Errorf("%s: report %q does not say %q", tc.name, text.String(), tc.says)
		}
	}
}
