package probe

// The tests that reach a daemon go through the Docker runtime, linked in here
// as the program links it (app/cmd/sandtray).
import _ "github.com/sandtray/sandtray/engine/runtime/docker"
