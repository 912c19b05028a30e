package statedir

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// An engine is its OS user and its state dir: two engines on one Docker
// daemon (the tray app and a `sandtray serve --stdio` with a state dir of
// its own, or two users) never see, reap or remove each other's sandboxes
// or spares (docs/security.md F37). Every container an engine makes carries its
// identity in sandbox.LabelEngine, and its name carries the identity's tag,
// so sandbox names are per engine too.

// Identity is the engine's sandbox.LabelEngine value: a hash of the OS
// user, the state dir's absolute path and the state dir's random key.
// The key makes it unguessable and unique to this state dir: two machines
// on one remote daemon with the same user id and home path still differ,
// and so does a copy of the state dir made elsewhere. The hash keeps the
// user and the path out of the label, which every Docker user can read.
func (s *Store) Identity() (string, error) {
	key, err := s.Key()
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(s.dir)
	if err != nil {
		return "", fmt.Errorf("state dir: %w", err)
	}
	sum := sha256.Sum256([]byte("sandtray engine\x00" + osUser() + "\x00" + abs + "\x00" + key))
	return hex.EncodeToString(sum[:16]), nil
}

// osUser is the engine's OS user: the uid, or the SID on Windows.
func osUser() string {
	if u, err := user.Current(); err == nil {
		return u.Uid
	}
	return strconv.Itoa(os.Getuid())
}

// ListOwned lists the engine whose identity is engine its containers among
// those managed selects: those with its identity, and those an older
// Sandtray made (no identity) for which the state dir holds a state file,
// as only the engine that made or adopted a sandbox has one. legacy is the
// older Sandtray's containers it leaves alone. An engine whose selector
// has no test label leaves test containers alone too: a user's engine must
// never adopt or reap them.
func (s *Store) ListOwned(ctx context.Context, d interface {
	List(ctx context.Context, labels map[string]string, all bool) ([]runtime.Container, error)
}, managed map[string]string, engine string) (own, legacy []runtime.Container, err error) {
	list, err := d.List(ctx, managed, true)
	if err != nil {
		return nil, nil, err
	}
	_, testing := managed[sandbox.LabelTest]
	for _, c := range list {
		switch mark := c.Labels[sandbox.LabelEngine]; {
		case !testing && c.Labels[sandbox.LabelTest] != "":
		case mark == engine:
			own = append(own, c)
		case mark != "":
			// another engine's: not even named in the log
		case s.Has(c.ID):
			own = append(own, c)
		default:
			legacy = append(legacy, c)
		}
	}
	return own, legacy, nil
}

// LogLegacy says once, at start-up, which containers of an older Sandtray
// the engine left alone, and why.
func LogLegacy(log *slog.Logger, legacy []runtime.Container) {
	if len(legacy) == 0 {
		return
	}
	names := make([]string, 0, len(legacy))
	for _, c := range legacy {
		names = append(names, c.Name+" ("+sandbox.ShortID(c.ID)+")")
	}
	slices.Sort(names)
	log.Info("left alone: containers made by an older Sandtray that this engine's state dir does not know; "+
		"another engine's, or left behind (remove them with docker rm if they are no one's)",
		"count", len(legacy), "containers", strings.Join(names, ", "))
}
