// Command demo runs Sandtray's real window against an in-memory backend with
// a few sandboxes, for screenshots under Xvfb:
//
//	DISPLAY=:99 FYNE_THEME=dark go run ./ui/internal/demo -tab 0
//
// It selects the first sandbox and the given detail tab once the window shows.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path"
	"slices"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/assets"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/serve/control"
	"github.com/sandtray/sandtray/ui"
)

func main() {
	tab := flag.Int("tab", 0, "detail tab to open: 0 activity, 1 resources, 2 files, 3 jobs, 4 network, 5 details")
	row := flag.Int("row", 0, "list row to select; -1 for none")
	tap := flag.String("tap", "", "label of a button to tap after selecting, e.g. Commit…")
	show := flag.String("window", "", "also open a window: clients, settings, secrets (Settings at its end), jobs or tray (the tray menu, drawn in a window)")
	empty := flag.Bool("empty", false, "start with no sandboxes")
	ask := flag.Bool("egress", false, "two requests wait for an answer at the egress gate (the approval dialog)")
	noTray := flag.Bool("notray", false, "as on a desktop without a tray host: the notice, and close minimises")
	noCommit := flag.Bool("nocommit", false, "the engine's runtime cannot commit (as Kubernetes): its actions are off, with why")
	flag.Parse()

	a := app.NewWithID("io.sandtray.demo")
	a.SetIcon(fyne.NewStaticResource("icon.png", assets.Icon))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	b := withEgress(withPorts(newFakeBackend()), *ask)
	if *noCommit {
		b.runtime = "kubernetes"
		b.lacks = map[string]string{"commit": `the "kubernetes" runtime cannot commit a sandbox's files to an image; a runtime that can is chosen with [runtime] name in config.toml`}
	}
	clients := newDemoClients()
	if *empty {
		b.boxes = nil
		clients.set("claude-code", false)
	}
	go b.tick(ctx)
	u := ui.New(a, b, ui.Options{
		SocketPath: "/run/user/1000/sandtray/mcp.sock",
		Quit:       func(bool) { a.Quit() },
		Notify:     func(title, body string) {},
		Clients:    clients,
		Settings:   newDemoSettings(),
		Autostart:  &demoAutostart{on: true},
		NoTray:     map[bool]string{true: "no tray (StatusNotifier) host answers on this desktop; on GNOME, the AppIndicator extension adds one"}[*noTray],
	})
	go u.Run(ctx)
	go func() {
		time.Sleep(4 * time.Second) // the first snapshots, on a loaded machine
		fyne.Do(func() { pick(u.Window().Content(), *row, *tab, "") })
		time.Sleep(500 * time.Millisecond)
		fyne.Do(func() { pick(u.Window().Content(), -1, *tab, *tap) })
	}()
	go func() { <-ctx.Done(); fyne.Do(a.Quit) }()
	u.Window().Resize(fyne.NewSize(1280, 800))
	u.ShowWindow()
	switch *show {
	case "clients":
		u.ShowClients()
	case "settings":
		u.ShowSettings()
	case "secrets":
		u.ShowSettings()
		scrollSettingsToEnd(a)
	case "jobs":
		u.ShowAllJobs()
	case "tray":
		showTrayMenu(a, u)
	}
	a.Run()
}

// pick selects a list row and a detail tab, and taps a button, by walking
// the window's widgets.
func pick(o fyne.CanvasObject, row, tab int, tap string) {
	listDone := false
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch w := o.(type) {
		case *widget.List:
			if !listDone && row >= 0 {
				w.Select(row)
				listDone = true
			}
		case *widget.Button:
			if tap != "" && w.Text == tap {
				w.OnTapped()
				tap = ""
			}
		case *container.AppTabs:
			w.SelectIndex(tab)
			for _, item := range w.Items {
				walk(item.Content)
			}
		case *container.Split:
			walk(w.Leading)
			walk(w.Trailing)
		case *container.Scroll:
			walk(w.Content)
		case *fyne.Container:
			for _, c := range w.Objects {
				walk(c)
			}
		}
	}
	walk(o)
}

// fakeBackend is an in-memory engine with a few sandboxes whose stats move.
type fakeBackend struct {
	mu      sync.Mutex
	runtime string            // "" for Docker
	lacks   map[string]string // what the runtime cannot do (-nocommit)
	boxes   []sandbox.Info
	paused  bool
	ch      chan sandbox.Snapshot
	t       float64
	jobs    *demoJobs
	egress  *demoEgress // egress.go; nil with -empty
}

func newFakeBackend() *fakeBackend {
	now := time.Now()
	spec := func(name, image string, mem int64, cpus float64, net string) sandbox.Spec {
		return sandbox.Spec{Name: name, Image: image, Network: net, MemoryMB: mem, CPUs: cpus,
			PidsLimit: 256, Workdir: "/workspace", CapAdd: []string{"CHOWN", "SETUID", "SETGID"}, Profile: "standard"}
	}
	box := func(id, name, image string, st sandbox.Status, persistent bool, client string, age time.Duration, mem int64, net string) sandbox.Info {
		sum := sha256.Sum256([]byte(name))
		return sandbox.Info{ID: id + hex.EncodeToString(sum[:])[len(id):], Name: name, Image: image, Status: st, Persistent: persistent,
			Owner:     sandbox.Owner{Client: client, Session: "s-" + id[:6] + "9f2c1e"},
			CreatedAt: now.Add(-age), LastUsed: now.Add(-age / 4), Spec: spec(name, image, mem, 1, net)}
	}
	f := &fakeBackend{
		ch: make(chan sandbox.Snapshot, 1),
		boxes: []sandbox.Info{
			box("3fa9c2d1e8b7", "data-cleanup", "python:3.12-slim", sandbox.StatusRunning, false, "claude-ai 0.1.0", 4*time.Minute, 512, "none"),
			box("8be01f77c3aa", "web-scraper", "sandtray/default:bookworm", sandbox.StatusRunning, true, "Claude Code 2.0.14", 3*time.Hour, 1024, "bridge"),
			box("c41d09a2b6e5", "node-build", "node:22-bookworm", sandbox.StatusRunning, false, "Cursor 1.7", 26*time.Minute, 2048, "none"),
			box("17ae55f0d932", "notebook", "sandtray/default:bookworm", sandbox.StatusStopped, true, "VS Code 1.104", 50*time.Hour, 512, "none"),
			box("e2f4a8c6b0d1", "quick-test", "debian:bookworm", sandbox.StatusMissing, false, "claude-ai 0.1.0", 90*time.Second, 256, "none"),
		},
	}
	f.jobs = newDemoJobs(func() []sandbox.Info {
		f.mu.Lock()
		defer f.mu.Unlock()
		return append([]sandbox.Info(nil), f.boxes...)
	})
	return f
}

// tick moves the stats and publishes a snapshot every second until ctx is done.
func (f *fakeBackend) tick(ctx context.Context) {
	for {
		f.mu.Lock()
		f.t++
		for i := range f.boxes {
			b := &f.boxes[i]
			if b.Status != sandbox.StatusRunning {
				b.Stats = sandbox.Stats{}
				continue
			}
			wave := (math.Sin(f.t/7+float64(i)) + 1) / 2
			b.Stats = sandbox.Stats{CPUPercent: 3 + wave*60*float64(i+1)/2, Pids: uint64(3 + i*4),
				MemoryBytes: uint64((40 + wave*float64(60*(i+1))) * (1 << 20)), MemoryLimit: uint64(b.Spec.MemoryMB) << 20}
		}
		f.publishLocked()
		f.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func (f *fakeBackend) publishLocked() {
	s := sandbox.Snapshot{Time: time.Now(), Paused: f.paused, Sessions: min(3, len(f.boxes)),
		Sandboxes: append([]sandbox.Info(nil), f.boxes...),
		Docker:    sandbox.DockerStatus{Connected: true, Version: "20.10.24 (API 1.41)", Host: "unix:///var/run/docker.sock", Runtime: f.runtime, Lacks: f.lacks}}
	if f.egress != nil {
		s.Egress = slices.Clone(f.egress.pending)
	}
	select {
	case <-f.ch:
	default:
	}
	f.ch <- s
}

func (f *fakeBackend) Watch(context.Context) ui.Snapshots { return f }

func (f *fakeBackend) Next(ctx context.Context) (sandbox.Snapshot, error) {
	select {
	case s := <-f.ch:
		return s, nil
	case <-ctx.Done():
		return sandbox.Snapshot{}, ctx.Err()
	}
}

func (f *fakeBackend) Logs(_ context.Context, ref string, q control.LogsQuery) ([]control.LogEntry, error) {
	return control.Entries(demoActivity, q), nil
}

func (f *fakeBackend) ActivityEntry(_ context.Context, ref string, at time.Time) (sandbox.Activity, error) {
	for _, a := range demoActivity {
		if a.Time.Equal(at) {
			return a, nil
		}
	}
	return sandbox.Activity{}, sandbox.ErrNotFound
}

// demoActivity is every sandbox's activity log in the demo.
var demoActivity = func() []sandbox.Activity {
	base := time.Now().Add(-3 * time.Minute)
	code := func(c int) *int { return &c }
	return []sandbox.Activity{
		{Time: base, Tool: "create_sandbox", Client: "claude-ai 0.1.0", Input: "python:3.12-slim", Duration: 840},
		{Time: base.Add(20 * time.Second), Tool: "write_file", Client: "claude-ai 0.1.0", Input: "clean.py", Duration: 35},
		{Time: base.Add(31 * time.Second), Tool: "execute_command", Client: "claude-ai 0.1.0", Input: "pip list --format=freeze | head -3",
			ExitCode: code(0), Duration: 612, Stdout: "numpy==2.1.0\npandas==2.2.3\npip==24.2\n"},
		{Time: base.Add(75 * time.Second), Tool: "execute_code", Client: "claude-ai 0.1.0", Language: "python",
			Input:    "import pandas as pd\ndf = pd.read_csv('sales.csv')\nprint(df.describe())",
			ExitCode: code(1), Duration: 1480, Stderr: "Traceback (most recent call last):\n  File \"<stdin>\", line 2, in <module>\nFileNotFoundError: [Errno 2] No such file or directory: 'sales.csv'\n"},
		{Time: base.Add(2 * time.Minute), Tool: "execute_command", Client: "claude-ai 0.1.0", Input: "sleep 120",
			ExitCode: code(137), Duration: 60000, TimedOut: true},
		{Time: base.Add(150 * time.Second), Tool: "execute_code", Client: "claude-ai 0.1.0", Language: "python",
			Input:    "import pandas as pd\ndf = pd.read_csv('data/sales.csv')\nprint(df.groupby('region').total.sum())",
			ExitCode: code(0), Duration: 930, Stdout: "region\neast     18234.50\nnorth    12011.75\nsouth     9877.10\nwest     20456.00\nName: total, dtype: float64\n"},
	}
}()

var fakeTree = map[string][]sandbox.FileEntry{
	".":    {{Path: "clean.py", Type: "file", Size: 1843}, {Path: "data", Type: "dir"}, {Path: "out", Type: "dir"}, {Path: "README.md", Type: "file", Size: 412}},
	"data": {{Path: "sales.csv", Type: "file", Size: 52311}, {Path: "regions.json", Type: "file", Size: 988}},
	"out":  {{Path: "summary.png", Type: "file", Size: 20480}},
}

func (f *fakeBackend) ListFiles(_ context.Context, _ sandbox.Owner, _, p string, _ int, _ bool) (sandbox.Listing, error) {
	return sandbox.Listing{Path: path.Join("/workspace", p), Entries: fakeTree[p]}, nil
}

func (f *fakeBackend) ReadFile(_ context.Context, _ sandbox.Owner, _, p string, _, _ int64) (sandbox.FileContent, error) {
	text := "import pandas as pd\n\ndef clean(df):\n    return df.dropna().drop_duplicates()\n"
	return sandbox.FileContent{Path: "/workspace/" + p, Data: []byte(text), Size: int64(len(text))}, nil
}

func (f *fakeBackend) SaveFiles(_ context.Context, _, p, host string) (sandbox.CopyResult, error) {
	return sandbox.CopyResult{Path: path.Join(host, path.Base(p)), Files: 3, Bytes: 54000}, nil
}

func (f *fakeBackend) update(ref string, change func(*sandbox.Info)) (sandbox.Info, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.boxes {
		if f.boxes[i].ID == ref {
			change(&f.boxes[i])
			f.publishLocked()
			return f.boxes[i], nil
		}
	}
	return sandbox.Info{}, fmt.Errorf("sandbox %s: %w", ref, sandbox.ErrNotFound)
}

func (f *fakeBackend) Stop(_ context.Context, _ sandbox.Owner, ref string) (sandbox.Info, error) {
	return f.update(ref, func(i *sandbox.Info) { i.Status = sandbox.StatusStopped })
}

func (f *fakeBackend) Kill(ctx context.Context, ref string) error {
	_, err := f.Stop(ctx, sandbox.Owner{}, ref)
	return err
}

func (f *fakeBackend) Delete(_ context.Context, _ sandbox.Owner, ref string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.boxes {
		if f.boxes[i].ID == ref {
			f.boxes = append(f.boxes[:i], f.boxes[i+1:]...)
			f.publishLocked()
			return nil
		}
	}
	return fmt.Errorf("sandbox %s: %w", ref, sandbox.ErrNotFound)
}

func (f *fakeBackend) SetPersistent(_ context.Context, _ sandbox.Owner, ref string, p bool) (sandbox.Info, error) {
	return f.update(ref, func(i *sandbox.Info) { i.Persistent = p })
}

func (f *fakeBackend) Commit(ctx context.Context, _ sandbox.Owner, _ string, req sandbox.CommitRequest, progress sandbox.Progress) (sandbox.CommitResult, error) {
	for i := 1; i <= 10; i++ {
		progress(float64(i), 10, fmt.Sprintf("Writing layer %d of 10", i))
		time.Sleep(200 * time.Millisecond)
	}
	return sandbox.CommitResult{Image: req.Image, ImageID: "sha256:4b1c0ffee0ddba11"}, nil
}

func (f *fakeBackend) ExportDockerfile(context.Context, sandbox.Owner, string, string) (sandbox.Export, error) {
	return sandbox.Export{Dockerfile: "FROM python:3.12-slim\nWORKDIR /workspace\nRUN pip install numpy==2.1.0 pandas==2.2.3\nCOPY workspace/ /workspace/\n"}, nil
}

func (f *fakeBackend) SaveDockerfile(_ context.Context, _, dir string) (sandbox.Export, error) {
	return sandbox.Export{Dir: dir, Files: []string{"workspace/clean.py"}}, nil
}

func (f *fakeBackend) SetPaused(p bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.paused = p
	f.publishLocked()
}

func (f *fakeBackend) StopEphemeral(context.Context) error { return nil }
