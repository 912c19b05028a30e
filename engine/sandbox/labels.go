package sandbox

// Docker labels are immutable, so they carry only what never changes about a
// sandbox; what changes (persistence, owner, last use) lives in the engine's
// state dir. The engine never touches a container without LabelManaged, nor
// one of another engine (LabelEngine).
const (
	LabelManaged = "io.sandtray.managed" // "true" on every Sandtray container
	// LabelEngine is the identity of the engine that made the container (its
	// OS user and state dir, see engine/internal/statedir's Identity). An
	// engine adopts, lists, reaps and removes only containers with its own;
	// a container without one (made by an older Sandtray) only when its
	// state dir has a state file for it.
	LabelEngine  = "io.sandtray.engine"
	LabelName    = "io.sandtray.name"    // the user-visible name, unique in its engine
	LabelCreated = "io.sandtray.created" // RFC 3339 creation time
	LabelImage   = "io.sandtray.image"   // the image reference as the user gave it
	LabelSpec    = "io.sandtray.spec"    // JSON of the Spec the sandbox was created with
	// LabelCommittedFrom and LabelCommittedAt mark an image committed from a
	// sandbox: the sandbox's name and the RFC 3339 time of the commit.
	LabelCommittedFrom = "io.sandtray.committed-from"
	LabelCommittedAt   = "io.sandtray.committed-at"
	// LabelCommittedBy is the identity (LabelEngine's value) of the engine
	// that committed the image: only that engine moves its tag or removes it.
	LabelCommittedBy = "io.sandtray.committed-by"
	// LabelCommittedOn is the id of the image a commit (or a fork's image)
	// was made on, the container's own: what it adds to the disk is its
	// size less that one's.
	LabelCommittedOn = "io.sandtray.committed-on"
	// LabelPool marks a container made for the engine's warm pool; its value
	// is the pool instance (one engine run) that made it. The label stays when the container
	// is handed out as a sandbox (labels are immutable): a container is still
	// in a pool only while its name is the pool's (see engine/internal/pool).
	LabelPool = "io.sandtray.pool"
	// LabelLink names a sandbox's link folder in the engine's state dir
	// (engine/internal/execgate: the socket its agent dials), so an engine
	// that restarts listens on it again.
	LabelLink = "io.sandtray.link"
	// LabelTest marks resources created by tests, so each test removes only its own.
	LabelTest = "io.sandtray.test"
)
