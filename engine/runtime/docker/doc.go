// Package docker is the only package that imports the Docker SDK
// (github.com/moby/moby/client and /api). It speaks to the daemon in
// Sandtray's terms: hardened sandbox containers, execs with separate streams,
// tar copies and stats. Every SDK error is translated once, here, into the
// kinds of engine/sandbox, so no other package ever inspects a Docker error:
// Docker's 404 becomes sandbox.ErrNotFound, 409 sandbox.ErrConflict, 400
// sandbox.ErrInvalid, 401/403 sandbox.ErrForbidden, and a daemon that cannot
// be reached or does not answer before ctx's deadline sandbox.ErrUnavailable.
// Errors read "operation: kind (Docker's message)" and keep Docker's error in
// their chain; a cancelled ctx wraps context.Canceled and no kind.
package docker
