# Sandtray: `make run` runs it, `make test` tests it. Both install what is
# missing on a Debian/Ubuntu machine with Docker (when run as root).
GO      ?= go
IMAGE   ?= sandtray/sandbox:latest
BIN     := bin
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# gcc for cgo and -race; debootstrap for the offline image; the rest for Fyne.
APT_PKGS := gcc libc6-dev debootstrap pkg-config libgl1-mesa-dev xorg-dev libwayland-dev libxkbcommon-dev

.PHONY: all build run serve test test-fault test-soak vet image test-image deps docker clean

all: build

build:
	$(GO) build -o $(BIN)/ ./app/cmd/...

## run: build Sandtray and run it: the tray app, or the engine alone without a display.
run: deps docker image build
	$(BIN)/sandtray

## test: vet and race-test everything against the real Docker daemon: unit,
## integration and GUI tests, the attack, file and CIS suite (engine/securitytest),
## then, alone, the faults that restart and freeze the daemon.
test: deps docker test-image
	$(GO) vet ./...
	$(GO) vet -tags fault ./engine/securitytest/
	SANDTRAY_REQUIRE_DOCKER=1 SANDTRAY_TEST_IMAGE=$(IMAGE) $(GO) test -race -count=1 -timeout 30m ./...
	$(MAKE) --no-print-directory test-fault

## test-fault: restart, freeze and kill the Docker daemon and Sandtray (alone: it breaks other tests).
test-fault: docker test-image
	SANDTRAY_REQUIRE_DOCKER=1 SANDTRAY_TEST_IMAGE=$(IMAGE) $(GO) test -tags fault -race -p 1 -count=1 -timeout 20m -run '^TestFault' ./engine/securitytest/

## test-soak: mix every tool for ten minutes; goroutines, files and containers must end at baseline.
test-soak: docker test-image
	SANDTRAY_REQUIRE_DOCKER=1 SANDTRAY_TEST_IMAGE=$(IMAGE) SANDTRAY_SOAK=10m $(GO) test -race -count=1 -timeout 30m -run TestSoak -v ./engine/securitytest/

## image / test-image: build the sandbox image unless Docker already has it.
image test-image: docker
	@docker image inspect $(IMAGE) >/dev/null 2>&1 || $(SUDO) packaging/images/build.sh $(IMAGE)

## deps: install missing system packages (Debian/Ubuntu).
deps:
	@missing=$$(for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing $$missing"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	fi

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

clean:
	rm -rf $(BIN)
