# Top-level build: `make` builds every part; `make check` runs the whole test suite
# (installing what it needs); `make demo` runs the main job on the simulated GPU;
# `make bench` prints every quoted figure against its target (bench/run.sh).
GO ?= go
BIN := bin
export CGO_ENABLED := 1
include kmod/version.mk

.PHONY: all go kmod simdrv libcgpu sim check bench demo deps clean
all: go kmod simdrv sim libcgpu

# Without the symbol table and DWARF (-s -w) each start of the plugin is about 7 ms
# shorter on the 2-core machine (29 -> 22 ms), and docker starts it twice a command;
# panics keep their stack traces (the pclntab stays). The version goes to the Go side
# (-X) and to the plugin's C constructor that answers docker-cli-plugin-metadata
# (CGPU_VERSION, cli-plugins/docker-cgpu/metadata.go).
go:
	CGO_CFLAGS="$${CGO_CFLAGS:--O2 -g} '-DCGPU_VERSION=\"$(CGPU_VERSION)\"'" \
	$(GO) build -ldflags "-s -w -X github.com/cgpu-project/cgpu/pkg/version.Version=$(CGPU_VERSION)" \
		-o $(BIN)/ ./cli-plugins/docker-cgpu ./cmd/...

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

bench: deps
	./bench/run.sh

demo: deps
	./scripts/demo.sh

clean:
	rm -rf $(BIN)
	$(MAKE) -C kmod clean
	$(MAKE) -C simdrv clean
	$(MAKE) -C sim clean
	$(MAKE) -C libcgpu clean
