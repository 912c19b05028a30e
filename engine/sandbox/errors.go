package sandbox

import "errors"

// Error kinds. Every error the engine returns wraps at most one of these, so
// callers classify with errors.Is and never by matching message text. The MCP
// server turns the "caller can fix it" kinds into tool errors a model can act
// on; anything else is an infrastructure failure.
var (
	// ErrNotFound: the named sandbox, image, file or job does not exist.
	ErrNotFound = errors.New("not found")
	// ErrInvalid: the request itself is wrong (bad argument, unknown language).
	ErrInvalid = errors.New("invalid argument")
	// ErrConflict: the request clashes with current state (name taken, sandbox stopped).
	ErrConflict = errors.New("conflict")
	// ErrForbidden: policy refuses the request (host path outside the allowed roots).
	ErrForbidden = errors.New("forbidden")
	// ErrTooLarge: a request or file exceeds a configured size cap.
	ErrTooLarge = errors.New("too large")
	// ErrUnsupported: the sandbox's image lacks what the request needs (a runtime, a tool).
	ErrUnsupported = errors.New("unsupported")
	// ErrUnavailable: the Docker daemon cannot be reached or did not answer in time.
	ErrUnavailable = errors.New("docker unavailable")
	// ErrPaused: the user paused new sandboxes from the tray.
	ErrPaused = errors.New("paused")
)

// IsUserError reports whether err is one the caller can fix by changing the
// request, as opposed to a failure of Docker or the host.
func IsUserError(err error) bool {
	for _, kind := range []error{ErrNotFound, ErrInvalid, ErrConflict, ErrForbidden, ErrTooLarge, ErrUnsupported, ErrPaused} {
		if errors.Is(err, kind) {
			return true
		}
	}
	return false
}
