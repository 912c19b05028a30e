package tools

// Instructions tell clients what the tools are for and how they fit
// together; the server sends them at initialize.
const Instructions = `Sandtray runs code in isolated Docker sandboxes on the user's machine.
execute_code and execute_command work without any setup: with no sandbox_id they use this session's default sandbox, created on first use.
Paths inside a sandbox are relative to /workspace unless absolute. Sandboxes have no network unless created with network "egress" (through Sandtray's egress gate: the package indexes, and hosts the user approves; request_network asks) or "bridge" (when the user allows it).
Ephemeral sandboxes are removed after the session ends; persist_sandbox keeps one.
To keep an environment, install_packages records exact versions, commit_sandbox saves a sandbox as an image, and export_dockerfile writes a Dockerfile that rebuilds it.
Before something risky, snapshot_sandbox saves a sandbox's files; restore_sandbox goes back to them, and fork_sandbox makes independent copies to try approaches side by side.
` + servingHowTo
