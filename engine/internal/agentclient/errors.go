package agentclient

import (
	"errors"
	"fmt"

	"github.com/sandtray/sandtray/agent/wire"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// ErrNoProgram is a spawn whose program the sandbox does not have.
var ErrNoProgram = errors.New("no such program in the sandbox")

// ErrRefused is a dial that nothing in the sandbox accepted, or a listen
// on a port something there already has.
var ErrRefused = errors.New("refused in the sandbox")

// maxErrText bounds the agent's words kept in an error.
const maxErrText = 1 << 10

// replyError is the error a reply reports, of the engine's kind. Its text
// is the agent's, which says only what the sandbox's own files are.
func replyError(r wire.Reply) error {
	if r.Err == "" {
		return nil
	}
	if len(r.Err) > maxErrText {
		r.Err = r.Err[:maxErrText] + "…"
	}
	kind := sandbox.ErrInvalid
	switch r.Kind {
	case wire.KindNotFound:
		kind = sandbox.ErrNotFound
	case wire.KindExists, wire.KindNotDir, wire.KindIsDir:
		kind = sandbox.ErrConflict
	case wire.KindPermission:
		kind = sandbox.ErrForbidden
	case wire.KindUnsupported:
		kind = sandbox.ErrUnsupported
	case wire.KindNoProgram:
		return fmt.Errorf("%s: %w", r.Err, ErrNoProgram)
	case wire.KindRefused:
		return fmt.Errorf("%s: %w", r.Err, ErrRefused)
	}
	return fmt.Errorf("%s: %w", r.Err, kind)
}
