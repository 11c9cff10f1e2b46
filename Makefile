# Top-level build: `make` builds every part; `make check` runs the whole test suite
# (installing what it needs); `make demo` runs the main job on the simulated GPU.
GO ?= go
BIN := bin
export CGO_ENABLED := 1

.PHONY: all go kmod simdrv libcgpu sim check demo deps clean
all: go kmod simdrv sim libcgpu

go:
	$(GO) build -o $(BIN)/ ./cli-plugins/docker-cgpu ./cmd/...

kmod:
	$(MAKE) -C kmod

simdrv:
	$(MAKE) -C simdrv

sim:
	$(MAKE) -C sim

libcgpu:
	$(MAKE) -C libcgpu

deps:
	./scripts/deps.sh

check: deps
	./test/run-all.sh

demo: deps
	./scripts/demo.sh

clean:
	rm -rf $(BIN)
	$(MAKE) -C kmod clean
	$(MAKE) -C simdrv clean
	$(MAKE) -C sim clean
	$(MAKE) -C libcgpu clean
