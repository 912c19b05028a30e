package doctor

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/config"

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
		e := &Env{Config: config.Default(), Docker: engine.DockerProbe{Version: "20.10", GPU: tc.gpu, GPUHolders: tc.holders}}
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

// TestGPUToolkitCheck: an NVIDIA Container Toolkit older than 1.17.8 on
// this host is a problem with one fix; a newer one is fine; no toolkit, no
// line; and it is reported with Docker down too (the toolkit is the host's).
func TestGPUToolkitCheck(t *testing.T) {
	tests := []struct {
		name   string
		tk     engine.GPUToolkit
		docker string
		want   []Level
		says   []string
	}{
		{"none", engine.GPUToolkit{}, "20.10", []Level{Info}, []string{"no GPUs on this Docker host"}},
		{"old", engine.GPUToolkit{Path: "/usr/bin/nvidia-ctk", Version: "1.17.7", TooOld: true}, "20.10", []Level{Warn, Info},
			[]string{"1.17.7", "older than 1.17.8", "CVE-2025-23266", "upgrade the NVIDIA Container Toolkit to 1.17.8 or later"}},
		{"old, Docker down", engine.GPUToolkit{Path: "/usr/bin/nvidia-ctk", Version: "1.16.0", TooOld: true}, "", []Level{Warn, Info},
			[]string{"1.16.0", "CVE-2025-23266"}},
		{"new", engine.GPUToolkit{Path: "/usr/bin/nvidia-ctk", Version: "1.17.8"}, "20.10", []Level{OK, Info}, []string{"1.17.8 or later"}},
		{"unknown version", engine.GPUToolkit{Path: "/usr/bin/nvidia-ctk", Output: "huh"}, "20.10", []Level{Warn, Info},
			[]string{"did not say its version", "nvidia-ctk --version"}},
	}
	for _, tc := range tests {
		e := &Env{Config: config.Default(), Docker: engine.DockerProbe{Version: tc.docker,
			GPU: sandbox.GPUStatus{Detail: "the Docker host has no GPU runtime"}, Toolkit: tc.tk}}
		lines := checkGPU(context.Background(), e)
		var got []Level
		var text strings.Builder
		for _, l := range lines {
			got = append(got, l.Level)
			text.WriteString(l.Detail + " | " + l.Fix + "\n")
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: levels %v, want %v (%s)", tc.name, got, tc.want, text.String())
		}
		for _, s := range tc.says {
			if !strings.Contains(text.String(), s) {
				t.Errorf("%s: report %q does not say %q", tc.name, text.String(), s)
			}
		}
		if fixes := strings.Count(text.String(), "| \n"); tc.tk.TooOld && len(lines)-fixes != 1 {
			t.Errorf("%s: want one fix line, got %q", tc.name, text.String())
		}
	}
}
