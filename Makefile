# Sandtray: `make run` runs it, `make test` tests it. Both install what is
# missing on a Debian/Ubuntu machine with Docker (when run as root).
GO      ?= go
IMAGE   ?= sandtray/sandbox:latest
BIN     := bin
# LOWPRI runs what no test waits for (vet, the cross builds) after what they
# do wait for (the test binaries, the sandbox image), on a machine with few cores.
LOWPRI  := nice -n 15
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# gcc for cgo and -race; debootstrap for the offline image; the rest for Fyne.
APT_PKGS := gcc libc6-dev debootstrap pkg-config libgl1-mesa-dev xorg-dev libwayland-dev libxkbcommon-dev

.PHONY: all agent build run serve test test-fault test-soak bench-ports test-cis-bench vet image test-image deps docker clean dist dist-deps
.PHONY: cross cross-test deps-platforms deps-mingw test-podman vet-here test-compile test-go test-logic test-fault-last

# apt_install installs those of the Debian packages $(1) that are missing,
# running $(2) first when some are.
define apt_install
	@missing=$$(for p in $(1); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing $$missing"; \
		$(2) $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	fi
endef

all: build

## agent: the sandbox agent (sandtray-agent) for linux/amd64 and arm64, which
## sandtray embeds (agent/agentbin): static, without cgo, rebuilt when its code changes.
AGENT_BIN := agent/agentbin/bin
AGENT_SRC := $(shell find agent app/cmd/sandtray-agent -name '*.go' -not -name '*_test.go') go.mod go.sum
agent: $(AGENT_BIN)/sandtray-agent-linux-amd64.gz $(AGENT_BIN)/sandtray-agent-linux-arm64.gz

$(AGENT_BIN)/sandtray-agent-linux-%.gz: $(AGENT_SRC)
	CGO_ENABLED=0 GOOS=linux GOARCH=$* $(GO) build -trimpath -ldflags='-s -w' -o $(AGENT_BIN)/sandtray-agent-linux-$* ./app/cmd/sandtray-agent
	gzip -9nf $(AGENT_BIN)/sandtray-agent-linux-$*

build: agent
	$(GO) build -o $(BIN)/ ./app/cmd/...

## run: build Sandtray and run it: the tray app, or the engine alone without a display.
run: deps docker image build
	$(BIN)/sandtray

## test: vet and race-test everything against the real Docker daemon: unit,
## integration and GUI tests, the attack, file and CIS suite (test/securitytest),
## beside them the end-to-end tests against Podman (make test-podman), then, alone
## against Docker, the faults that restart and freeze the daemon (test-fault).
## The cross builds and vet run beside all of it: the tests mostly wait on Docker.
test: deps docker
	$(MAKE) --no-print-directory -j6 --output-sync=target test-go test-podman test-fault-last cross-test vet-here

# test-fault-last: the faults, once the tests that share the daemon are done.
test-fault-last: test-go test-podman
	$(MAKE) --no-print-directory test-fault

# vet-here: go vet for this platform, the fault tests' build tag too. With
# -race it checks what test-compile built, and compiles the tree (and GLFW's
# and OpenGL's C) no second time.
vet-here: test-compile
	$(LOWPRI) $(GO) vet -race ./...
	$(LOWPRI) $(GO) vet -race -tags fault ./test/securitytest/

# test-compile: builds every package's race test binary (running none) while
# the sandbox image is built, so test-go starts testing at once.
test-compile: agent
	$(GO) test -race -count=1 -run '^$$' -exec /bin/true ./... >/dev/null

# test-go: every package's tests, packages three at a time (most of their
# time is spent waiting on Docker).
test-go: docker test-image deps-platforms test-compile agent
	SANDTRAY_REQUIRE_DOCKER=1 SANDTRAY_TEST_IMAGE=$(IMAGE) $(GO) test -race -count=1 -p 3 -timeout 30m ./...

## test-logic: the engine's logic (registry, reaper, jobs, outcomes, pool, scoping) on the
## in-memory runtime (engine/runtime/fakeruntime): no Docker needed, seconds.
test-logic: agent
	$(GO) test -race -count=1 ./engine/runtime/ ./engine/runtime/fakeruntime/
	$(GO) test -race -count=1 -run Logic ./engine/

## test-fault: restart, freeze and kill the Docker daemon and Sandtray (alone: it breaks other tests).
test-fault: docker test-image agent
	SANDTRAY_REQUIRE_DOCKER=1 SANDTRAY_TEST_IMAGE=$(IMAGE) $(GO) test -tags fault -race -p 1 -count=1 -timeout 20m -run '^TestFault' ./test/securitytest/

## bench-ports: expose_port's forward throughput (MB/s) and time per new connection, into an offline sandbox.
bench-ports: docker test-image agent
	SANDTRAY_TEST_IMAGE=$(IMAGE) $(GO) test -run '^$$' -bench Forward -benchtime 10x -count 3 ./engine/internal/portfwd/

## test-soak: mix every tool for ten minutes; goroutines, files and containers must end at baseline.
test-soak: docker test-image agent
	SANDTRAY_REQUIRE_DOCKER=1 SANDTRAY_TEST_IMAGE=$(IMAGE) SANDTRAY_SOAK=10m $(GO) test -race -count=1 -timeout 30m -run TestSoak -v ./test/securitytest/

## test-cis-bench: docker-bench-security (CIS sections 4 and 5) against a standard and a strict
## sandbox; BENCH names docker-bench-security.sh from github.com/docker/docker-bench-security.
test-cis-bench: docker test-image
	@test -n "$(BENCH)" || { echo "set BENCH=/path/to/docker-bench-security.sh"; exit 1; }
	SANDTRAY_REQUIRE_DOCKER=1 SANDTRAY_TEST_IMAGE=$(IMAGE) SANDTRAY_DOCKER_BENCH=$(BENCH) $(GO) test -count=1 -run TestDockerBench -v ./test/securitytest/

## image / test-image: build the sandbox image unless Docker already has it.
image test-image: docker
	@docker image inspect $(IMAGE) >/dev/null 2>&1 || $(SUDO) packaging/images/build.sh $(IMAGE)

## deps: install missing system packages (Debian/Ubuntu).
deps:
	$(call apt_install,$(APT_PKGS),)

## docker: make sure a Docker daemon answers; start one when root and none runs.
docker:
	@docker info >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ] && command -v dockerd >/dev/null; then \
			echo "starting dockerd (log: /tmp/dockerd.log)"; \
			(setsid dockerd >/tmp/dockerd.log 2>&1 &); \
			for i in $$(seq 30); do docker info >/dev/null 2>&1 && break; sleep 1; done; \
		fi; \
		docker info >/dev/null 2>&1 || { echo "Docker is not running: start it (sudo systemctl start docker) and try again" >&2; exit 1; }; \
	}

## cross: every platform from this one: the six CGO_ENABLED=0 builds of
## ./app/cmd/... (the engine without a window), the Windows tray app with
## mingw-w64, and go vet for macOS and Windows. Run with -j; outputs stay in
## bin/cross, so an unchanged tree relinks nothing.
CROSS_OS := linux-amd64 linux-arm64 darwin-amd64 darwin-arm64 windows-amd64 windows-arm64
cross: cross-windows-gui vet-darwin vet-windows $(addprefix cross-,$(CROSS_OS))

# cross-test: what make test builds for other platforms: amd64 of each OS
# (arm64 adds no code of its own; make cross and make dist build it). The
# Windows tray app's cgo build (mingw compiling GLFW and OpenGL's C, most of
# a fresh make test's time) is left to make cross and make dist: its Go code
# is the code test-go builds, and the OS-specific files build here.
# Linux's build without cgo is left to make cross too: its files are the other
# Unix's, which cross-darwin-amd64 builds. Each OS's build follows its vet,
# which compiles the same packages: run side by side they compiled them twice.
cross-test: vet-darwin vet-windows cross-darwin-amd64 cross-windows-amd64
cross-darwin-amd64: vet-darwin
cross-windows-amd64: vet-windows

cross-%: agent
	CGO_ENABLED=0 GOOS=$(word 1,$(subst -, ,$*)) GOARCH=$(word 2,$(subst -, ,$*)) $(LOWPRI) $(GO) build -o $(BIN)/cross/$*/ ./app/cmd/...

cross-windows-gui: deps-mingw agent
	CGO_ENABLED=1 CC=x86_64-w64-mingw32-gcc GOOS=windows GOARCH=amd64 $(GO) build -o $(BIN)/cross/windows-amd64-gui/ ./app/cmd/sandtray

# go vet for another OS covers every package that builds there without cgo;
# Fyne's packages need cgo on macOS, so the window's code is vetted on Linux
# (and built for Windows by cross-windows-gui, in make cross).
vet-%: agent
	CGO_ENABLED=0 GOOS=$* $(LOWPRI) $(GO) vet $$(CGO_ENABLED=0 GOOS=$* $(GO) list -e -f '{{.ImportPath}} {{join .Deps " "}}' ./... | grep -v -e fyne.io/fyne -e go-gl | cut -d' ' -f1)

## deps-platforms: OpenSSH (the ssh:// end-to-end test), Podman (make test-podman).
PLATFORM_PKGS := openssh-server openssh-client podman catatonit
deps-platforms:
	$(call apt_install,$(PLATFORM_PKGS),)

## deps-mingw: mingw-w64, for the Windows tray app's cgo build (make cross, make dist).
deps-mingw:
	$(call apt_install,gcc-mingw-w64-x86-64,)

## test-podman: the MCP end-to-end tests against Podman's Docker-compatible API
## (installs podman and catatonit, runs `podman system service` on a private socket).
test-podman: docker test-image deps-platforms test-compile
	GO=$(GO) IMAGE=$(IMAGE) .ci/test-podman

# (dpkg-query, not dpkg -s: with arm64 added for make dist, a name like libgl1-mesa-dev
# matches two architectures and dpkg -s calls it ambiguous.)
## dist: release archives in dist/: Linux amd64 and arm64 and Windows amd64 tray apps
## (cgo, cross-built), macOS amd64 and arm64 engine and shim; see packaging/dist.sh.
dist: dist-deps agent
	packaging/dist.sh

# dist-deps: the cross compilers and arm64 libraries the tray app links (Debian/Ubuntu, amd64 host).
DIST_PKGS := gcc-mingw-w64-x86-64 gcc-aarch64-linux-gnu libc6-dev-arm64-cross zip \
	libgl1-mesa-dev:arm64 libx11-dev:arm64 libxcursor-dev:arm64 libxrandr-dev:arm64 \
	libxinerama-dev:arm64 libxi-dev:arm64 libxxf86vm-dev:arm64 libwayland-dev:arm64 libxkbcommon-dev:arm64
dist-deps: deps
	$(call apt_install,$(DIST_PKGS),dpkg --print-foreign-architectures | grep -qx arm64 || $(SUDO) dpkg --add-architecture arm64;)

clean:
	rm -rf $(BIN) dist

## k8s-node: build the single-node test cluster's parts (kube-apiserver, controller-manager,
## scheduler, kubelet, etcd, containerd, CNI plugins, a pause image) from the Go module proxy
## into a cache outside the repo, once per version; see test/k8s/README.md.
## k8s-up / k8s-down: start the node as root (from nothing to Ready, the sandbox image
## imported, kubeconfig in $(K8S_KUBECONFIG)) / stop it and remove all it made.
## test-k8s: check up.sh's waits (test/k8s/lib_test.sh), start the node, run the tests
## built with the k8s tag against it, stop it.
.PHONY: k8s-node k8s-up k8s-down test-k8s
K8S_CACHE ?= $(or $(SANDTRAY_K8S_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/sandtray/k8s)
K8S_KUBECONFIG := $(or $(SANDTRAY_K8S_DIR),/var/tmp/sandtray-k8s)/kubeconfig
K8S_ENV := SANDTRAY_K8S_CACHE=$(K8S_CACHE) SANDTRAY_K8S_IMAGES=$(IMAGE)
# The packages with tests behind the k8s build tag.
K8S_PKGS = $(shell grep -rlE --include='*.go' --exclude-dir=bin '^//go:build .*\bk8s\b' . | xargs -r -n1 dirname | sort -u)

k8s-node:
	SANDTRAY_K8S_CACHE=$(K8S_CACHE) test/k8s/build.sh

k8s-up: docker test-image k8s-node
	$(SUDO) env $(K8S_ENV) test/k8s/up.sh

k8s-down:
	$(SUDO) env $(K8S_ENV) test/k8s/down.sh

test-k8s: docker test-image k8s-node
	$(GO) test -count=1 ./test/k8s/scripttest/
	@$(SUDO) env $(K8S_ENV) test/k8s/up.sh || { $(SUDO) env $(K8S_ENV) test/k8s/down.sh; exit 1; }; \
	SANDTRAY_K8S_KUBECONFIG=$(K8S_KUBECONFIG) SANDTRAY_REQUIRE_K8S=1 SANDTRAY_TEST_IMAGE=$(IMAGE) \
		$(GO) test -tags k8s -count=1 -timeout 15m -v $(K8S_PKGS); rc=$$?; \
	$(SUDO) env $(K8S_ENV) test/k8s/down.sh; exit $$rc
