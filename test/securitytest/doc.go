// Package securitytest proves, against the real Docker daemon, that
// Sandtray's defaults hold: it has no code of its own, only tests.
//
// The attack tests drive a real engine through its MCP server with an
// independent MCP client (github.com/modelcontextprotocol/go-sdk), calling
// the tools as a model would, and check three things for every attack: the
// sandbox is contained (the host and the other sandboxes are unaffected), the
// engine keeps serving other sandboxes, and the result the model gets says
// what happened. The same attacks run again under gVisor (runtime "runsc")
// when the daemon has that runtime registered.
//
// The CIS test inspects a fresh sandbox against the CIS Docker Benchmark's
// container runtime checks (section 5, and 4.1).
//
// The fault tests, behind the build tag "fault", restart and freeze the
// Docker daemon and kill Sandtray itself, so they must never run beside
// other tests: `make test` runs them alone after the rest (as `make
// test-fault` does). The soak test runs only when SANDTRAY_SOAK names a
// duration (`make test-soak`), and the job-output flood at issue 23's
// scale (100 jobs of 8 MB) only when SANDTRAY_JOB_FLOOD is set.
//
// docs/security.md lists every case with its outcome.
package securitytest
