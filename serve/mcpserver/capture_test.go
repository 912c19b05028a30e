package mcpserver

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestCaptureToolsReachBackendAndReturnStructuredResults(t *testing.T) {
	runToolCases(t, []toolCase{
		{
			name: "install_packages with the default manager",
			tool: "install_packages", args: map[string]any{"sandbox_id": "web", "packages": []any{"numpy==2.1.0", " pandas "}, "timeout_s": 120},
			setup: func(f *fakeBackend) {
				f.install = sandbox.InstallResult{Manager: "pip", Output: "Successfully installed numpy pandas\n", Duration: 1500 * time.Millisecond,
					Installed: []sandbox.Package{{Manager: "pip", Name: "numpy", Version: "2.1.0"}, {Manager: "pip", Name: "pandas", Version: "2.2.3"}}}
			},
			wantCall: fakeCall{Method: "InstallPackages", Ref: "web", Req: sandbox.InstallRequest{
				Packages: []string{"numpy==2.1.0", "pandas"}, Manager: "auto", Timeout: 2 * time.Minute}},
			want: map[string]any{"manager": "pip", "output": "Successfully installed numpy pandas\n", "duration_ms": 1500.0,
				"installed": []any{
					map[string]any{"manager": "pip", "name": "numpy", "version": "2.1.0"},
					map[string]any{"manager": "pip", "name": "pandas", "version": "2.2.3"},
				}},
			wantText: []string{"Installed 2 packages with pip in 1.5s:\n  numpy 2.1.0\n  pandas 2.2.3", "[output]\nSuccessfully installed"},
		},
		{
			name: "install_packages with an alias for apt",
			tool: "install_packages", args: map[string]any{"sandbox_id": "web", "packages": []any{"curl"}, "manager": "apt-get"},
			setup:    func(f *fakeBackend) { f.install = sandbox.InstallResult{Manager: "apt"} },
			wantCall: fakeCall{Method: "InstallPackages", Ref: "web", Req: sandbox.InstallRequest{Packages: []string{"curl"}, Manager: "apt"}},
			want:     map[string]any{"manager": "apt", "output": "", "duration_ms": 0.0, "installed": []any{}},
		},
		{
			name: "commit_sandbox",
			tool: "commit_sandbox", args: map[string]any{"sandbox_id": "web", "image": "localhost:5000/team/my-env:v1.2", "overwrite": true},
			setup: func(f *fakeBackend) {
				f.commit = sandbox.CommitResult{Image: "localhost:5000/team/my-env:v1.2", ImageID: "sha256:0123456789abcdef0123"}
			},
			wantCall: fakeCall{Method: "Commit", Ref: "web", Req: sandbox.CommitRequest{Image: "localhost:5000/team/my-env:v1.2", Overwrite: true}},
			want:     map[string]any{"image": "localhost:5000/team/my-env:v1.2", "image_id": "sha256:0123456789abcdef0123"},
			wantText: []string{"as image localhost:5000/team/my-env:v1.2 (id 0123456789ab)", `create_sandbox image "localhost:5000/team/my-env:v1.2"`},
		},
		{
			name: "export_dockerfile written to the host",
			tool: "export_dockerfile", args: map[string]any{"sandbox_id": "web", "host_path": "/home/u/Sandtray/env"},
			setup: func(f *fakeBackend) {
				f.export = sandbox.Export{Dockerfile: "FROM python:3.12-slim\nCOPY context/ /\n", Dir: "/home/u/Sandtray/env",
					Files: []string{"context/workspace/main.py"}}
			},
			wantCall: fakeCall{Method: "ExportDockerfile", Ref: "web", Req: "/home/u/Sandtray/env"},
			want: map[string]any{"dockerfile": "FROM python:3.12-slim\nCOPY context/ /\n", "dir": "/home/u/Sandtray/env",
				"files": []any{"context/workspace/main.py"}},
			wantText: []string{"Wrote Dockerfile, .dockerignore and 1 build-context file to /home/u/Sandtray/env", "\n\nFROM python:3.12-slim\nCOPY"},
		},
		{
			name: "export_dockerfile only returned; a relative host_path is the engine's to judge",
			tool: "export_dockerfile", args: map[string]any{"sandbox_id": "web"},
			setup:    func(f *fakeBackend) { f.export = sandbox.Export{Dockerfile: "FROM debian\n"} },
			wantCall: fakeCall{Method: "ExportDockerfile", Ref: "web", Req: ""},
			want:     map[string]any{"dockerfile": "FROM debian\n", "files": []any{}},
			wantText: []string{"Nothing was written; pass host_path to save it.\n\nFROM debian"},
		},
	})
}

func TestInstallAndCommitReportProgress(t *testing.T) {
	tests := []struct {
		tool string
		args map[string]any
	}{
		{"install_packages", map[string]any{"sandbox_id": "web", "packages": []any{"curl"}}},
		{"commit_sandbox", map[string]any{"sandbox_id": "web", "image": "my-env:v1"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			fake := newFake()
			fake.onProgress = pullProgress
			c := mcpGoClient(t, serve(t, fake, Options{}))
			progress := watchProgress(c)
			req := callRequest(tt.tool, tt.args)
			req.Params.Meta = &mcp.Meta{ProgressToken: "tok-1"}
			res, err := c.CallTool(testContext(t), req)
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError {
				t.Fatalf("tool error: %s", textOfResult(res))
			}
			// Notifications precede the result and are handled in order.
			if diff := cmp.Diff(wantProgress, progress.take()); diff != "" {
				t.Errorf("progress notifications (-want +got):\n%s", diff)
			}
		})
	}
}
