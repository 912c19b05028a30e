package sandbox

import "time"

// Package managers install_packages knows.
const (
	ManagerAuto = "auto"
	ManagerApt  = "apt"
	ManagerApk  = "apk"
	ManagerPip  = "pip"
	ManagerNpm  = "npm"
)

// InstallRequest asks for packages to be installed in a sandbox.
type InstallRequest struct {
	Packages []string      // names, optionally pinned: "numpy==2.1.0", "curl=7.88.1-10"
	Manager  string        // "" or ManagerAuto picks from what the image has
	Timeout  time.Duration // 0: the configured maximum exec timeout
}

// Package is one installed package, as recorded in a sandbox's manifest.
type Package struct {
	Manager string `json:"manager"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

// InstallResult is what install_packages did.
type InstallResult struct {
	Manager   string
	Installed []Package // exact versions now present
	Output    string    // the package manager's output, capped
	Duration  time.Duration
}

// CommitRequest saves a sandbox's filesystem as a new image.
type CommitRequest struct {
	Image     string // repo:tag
	Overwrite bool   // replace an existing tag (never the sandbox's own base image)
}

// CommitResult names the committed image.
type CommitResult struct {
	Image   string
	ImageID string
}

// Export is a Dockerfile that rebuilds a sandbox, and its build context.
type Export struct {
	Dockerfile string
	Dir        string   // host folder the export was written to; "" when only returned
	Files      []string // build-context files (relative to Dir), besides Dockerfile and .dockerignore
}
