package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
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

// engineIdentity is this engine's sandbox.LabelEngine value: a hash of the
// OS user, the state dir's absolute path and the state dir's random key.
// The key makes it unguessable and unique to this state dir: two machines
// on one remote daemon with the same user id and home path still differ,
// and so does a copy of the state dir made elsewhere. The hash keeps the
// user and the path out of the label, which every Docker user can read.
func engineIdentity(store *stateStore, stateDir string) (string, error) {
	key, err := store.Key()
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(stateDir)
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

// nameTagLen is how much of the identity a container name carries.
const nameTagLen = 8

// containerName is the Docker name of this engine's sandbox name:
// "sandtray-<name>-<tag>". Docker's names are one namespace per daemon;
// the tag makes them one per engine, so another engine's "data" neither
// blocks this one's nor tells it that it exists.
func (c *settings) containerName(name string) string {
	return containerPrefix + name + "-" + c.engine[:nameTagLen]
}

// nameOf is the sandbox name in a container's Docker name: containerName
// undone, or, for a container of an older Sandtray, the name after the
// prefix alone.
func (c *settings) nameOf(containerName string) string {
	name := strings.TrimPrefix(containerName, containerPrefix)
	return strings.TrimSuffix(name, "-"+c.engine[:nameTagLen])
}

// managed selects every managed container the engine may look at: the
// Sandtray containers of the daemon, narrowed by the engine's own labels
// (tests run engines side by side, each on its own). Another engine's are
// among them: ownedBy tells them apart.
func (c *settings) managed() map[string]string {
	s := map[string]string{sandbox.LabelManaged: "true"}
	maps.Copy(s, c.labels)
	return s
}

// scope selects the containers this engine made: managed, with its
// identity. The warm pool lists and removes within it.
func (c *settings) scope() map[string]string {
	s := c.managed()
	s[sandbox.LabelEngine] = c.engine
	return s
}

// listOwned lists this engine's containers: those with its identity, and
// those an older Sandtray made (no identity) for which its state dir holds
// a state file, as only the engine that made or adopted a sandbox has one.
// legacy is the older Sandtray's containers it leaves alone. An engine
// without a test label leaves test containers alone too: a user's engine
// must never adopt or reap them.
func (e *Engine) listOwned(ctx context.Context) (own, legacy []runtime.Container, err error) {
	list, err := e.docker.List(ctx, e.cfg().managed(), true)
	if err != nil {
		return nil, nil, err
	}
	_, testing := e.cfg().labels[sandbox.LabelTest]
	for _, c := range list {
		switch mark := c.Labels[sandbox.LabelEngine]; {
		case !testing && c.Labels[sandbox.LabelTest] != "":
		case mark == e.cfg().engine:
			own = append(own, c)
		case mark != "":
			// another engine's: not even named in the log
		case e.store.Has(c.ID):
			own = append(own, c)
		default:
			legacy = append(legacy, c)
		}
	}
	return own, legacy, nil
}

// logLegacy says once, at start-up, which containers of an older Sandtray
// the engine left alone, and why.
func (e *Engine) logLegacy(legacy []runtime.Container) {
	if len(legacy) == 0 {
		return
	}
	names := make([]string, 0, len(legacy))
	for _, c := range legacy {
		names = append(names, c.Name+" ("+sandbox.ShortID(c.ID)+")")
	}
	slices.Sort(names)
	e.log.Info("left alone: containers made by an older Sandtray that this engine's state dir does not know; "+
		"another engine's, or left behind (remove them with docker rm if they are no one's)",
		"count", len(legacy), "containers", strings.Join(names, ", "))
}
