package doctor

import (
	"os/exec"
	"runtime"
)

// The fixes that depend on the OS: one each, for the OS the report runs on.

// startDocker is how to get a Docker engine running on goos: install one
// when the docker command is missing (on Linux), else start it.
func startDocker(goos string, haveCLI bool) string {
	switch goos {
	case "darwin":
		return "start Docker Desktop (or `colima start`)"
	case "windows":
		return "start Docker Desktop"
	}
	if !haveCLI {
		return "install Docker (`sudo apt-get install docker.io`, or your distribution's package) and start it"
	}
	return "start Docker: `sudo systemctl start docker`"
}

// unpin is how to stop pointing Sandtray at one engine: where it was named.
func unpin(source string) string {
	switch source {
	case "DOCKER_HOST":
		return "start the engine it names, or unset DOCKER_HOST"
	case "docker.host in config.toml":
		return "start the engine it names, or remove docker.host from config.toml"
	}
	return "start the engine it names, or `docker context use default`"
}

// haveDockerCLI says whether a docker command is on PATH.
func haveDockerCLI() bool {
	_, err := exec.LookPath("docker")
	return err == nil
}

// thisOS is the OS the fixes are for; tests change it.
var thisOS = runtime.GOOS
