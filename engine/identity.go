package engine

import (
	"maps"
	"strings"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// The engine's identity (settings.engine, from statedir.Store.Identity) in
// its containers' names and in the labels that select them.

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
