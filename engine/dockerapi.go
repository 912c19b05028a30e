package engine

import (
	"context"
	"io"
	"time"

	"github.com/sandtray/sandtray/engine/internal/docker"
)

// dockerAPI is what the engine needs from Docker; *docker.Client provides it.
// Keeping it small lets fault tests wrap the real client.
type dockerAPI interface {
	ImageExists(ctx context.Context, ref string) (bool, error)
	PullImage(ctx context.Context, ref string, progress func(docker.PullProgress)) error
	Create(ctx context.Context, o docker.CreateOptions) (string, error)
	Start(ctx context.Context, id string) error
	Attach(ctx context.Context, id string) (*docker.Attachment, error) // a new sandbox's first kernel's channel
	Stop(ctx context.Context, id string, timeout time.Duration) error
	Kill(ctx context.Context, id string) error
	Signal(ctx context.Context, id, sig string) error // to PID 1 from outside: an install's freeze stops it (pid1.go)
	Remove(ctx context.Context, id string) error
	Rename(ctx context.Context, id, name string) error
	Inspect(ctx context.Context, id string) (docker.Container, error)
	List(ctx context.Context, labels map[string]string, all bool) ([]docker.Container, error)
	Exec(ctx context.Context, id string, o docker.ExecOptions) (int, error)
	ExecStream(ctx context.Context, id, user string, cmd []string) (*docker.ExecConn, error) // port forwards' relays
	GPUSupport(ctx context.Context) (docker.GPUSupport, error)
	StatPath(ctx context.Context, id, path string) (docker.PathStat, error)
	CopyTo(ctx context.Context, id, dstDir string, tarStream io.Reader) error
	CopyFrom(ctx context.Context, id, path string) (io.ReadCloser, docker.PathStat, error)
	UserIDs(ctx context.Context, id, user string) (uid, gid int, err error)
	Stats(ctx context.Context, id string) (docker.StatsSample, error)
	Events(ctx context.Context, labels map[string]string) (<-chan docker.Event, <-chan error)
	Diff(ctx context.Context, id string) ([]docker.Change, error)
	Disk(ctx context.Context, id string) (docker.DiskInfo, error)
	SizeRw(ctx context.Context, id string) (int64, error)
	ConnectNetwork(ctx context.Context, id, network string) error
	DisconnectNetwork(ctx context.Context, id, network string) error
	InspectImage(ctx context.Context, ref string) (docker.Image, error)
	Commit(ctx context.Context, id, tag string, cfg docker.ImageConfig) (string, error)
	UpdateLimits(ctx context.Context, id string, memoryMB, nanoCPUs int64) error
	ImageEvents(ctx context.Context) (<-chan docker.ImageEvent, <-chan error)
	StreamStats(ctx context.Context, id string, fn func(docker.StatsSample)) error
	TagImage(ctx context.Context, src, ref string) error
	RemoveImage(ctx context.Context, ref string) error
	RemoveUntagged(ctx context.Context, id string) (bool, error)
	// snapshots (snapshot.go)
	Pause(ctx context.Context, id string) error
	Unpause(ctx context.Context, id string) error
	ImagesLabeled(ctx context.Context, labels map[string]string) ([]docker.LabeledImage, error)
	TmpfsMounts(ctx context.Context, id string) ([]string, error)
	ImageSize(ctx context.Context, ref string) (int64, error)
}
