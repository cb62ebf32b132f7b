# Convoy: thin wrapper around CMake. Every target first installs missing Debian packages
# (as root) and configures the build directory it needs.
#
#   make bench                 side-by-side benchmark on this machine (Open MPI, build/)
#   make test                  default test tier against Open MPI and MPICH, plus the
#                              sanitizer tier (Open MPI, build-asan/) and the simulation
#                              test (SimGrid SMPI, build-sim/)
#   make test MPI=openmpi      one configuration only (MPI=mpich, MPI=sim likewise)
#   make test-full             default and full tiers
#   make check-full            the long checker sweeps (label checkfull, build/)
#   make sim                   SimGrid SMPI build in build-sim/ (convoy-bench for simulated
#                              clusters; run it with build-sim/convoy-smpirun)
#   make build | build-mpich | build-asan | format | clean | deps
#
# Variables: MPI (libraries to test, default "openmpi mpich sim"), CTEST_J (parallel ctest jobs,
# default 2: the single-process checker sweeps run two at a time, while an MPI test holds
# the convoy_mpi resource lock and as many processors as ranks, so MPI jobs never overlap
# each other), CMAKE_ARGS (extra -D options).

SHELL := /bin/bash

MPI ?= openmpi mpich sim
CTEST_J ?= 2
CMAKE_ARGS ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

BUILD := build
BUILD_MPICH := build-mpich
BUILD_ASAN := build-asan
BUILD_SIM := build-sim

# Build directory and CMake options per configuration.
DIR_openmpi := $(BUILD)
DIR_mpich := $(BUILD_MPICH)
DIR_asan := $(BUILD_ASAN)
DIR_sim := $(BUILD_SIM)
MPIOPTS_openmpi := -DMPI_C_COMPILER=/usr/bin/mpicc.openmpi \
                   -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.openmpi
MPIOPTS_mpich := -DMPI_C_COMPILER=/usr/bin/mpicc.mpich \
                 -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich
OPTS_openmpi := $(MPIOPTS_openmpi) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONVOY_SANITIZE=OFF
OPTS_mpich := $(MPIOPTS_mpich) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONVOY_SANITIZE=OFF
OPTS_asan := $(MPIOPTS_openmpi) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONVOY_SANITIZE=ON
# SimGrid SMPI (cmake/ConvoySimGrid.cmake): the library, convoy-bench, convoy-check and
# the simulation test (tests/sim).
OPTS_sim := -DCONVOY_SIMGRID=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONVOY_SANITIZE=OFF \
            -DCONVOY_BUILD_TESTS=ON

# Tier labels (ctest -L takes a regular expression, matched against each label).
TIER_default := ^default$$
TIER_full := ^(default|full)$$
TIER_asan := ^asan$$

DEB_PACKAGES := cmake ninja-build gcc gfortran make pkg-config libopenmpi-dev openmpi-bin \
                libmpich-dev mpich python3 python3-matplotlib python3-numpy \
                scalapack-mpi-test hpcc
# `make sim` (and the sim test configuration) also needs SimGrid's SMPI.
SIM_PACKAGES := libsimgrid-dev

.PHONY: all deps build build-mpich build-asan sim test test-full check-full bench format clean

# Targets that build the SimGrid configuration also install SimGrid (through deps).
sim test test-full: DEPS_EXTRA := $(SIM_PACKAGES)

all: build

# Installs what is missing; costs one dpkg-query when everything is there.
deps:
	@missing=""; \
	for p in $(DEB_PACKAGES) $(DEPS_EXTRA); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' \
	    || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "make deps: installing$$missing"; \
	    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing; \
	  else \
	    echo "make deps: missing Debian packages:$$missing" >&2; \
	    echo "  run as root: apt-get install$$missing   (or: sudo make deps)" >&2; \
	    exit 1; \
	  fi; \
	fi

# configure+build one configuration: $(call build_cfg,openmpi|mpich|asan)
define build_cfg
	cmake -S . -B $(DIR_$(1)) -G Ninja $(OPTS_$(1)) $(CMAKE_ARGS)
	cmake --build $(DIR_$(1)) -j $(JOBS)
endef

build: deps
	$(call build_cfg,openmpi)

build-mpich: deps
	$(call build_cfg,mpich)

build-asan: deps
	$(call build_cfg,asan)

# SimGrid SMPI build: build-sim/bin/convoy-bench, run with build-sim/convoy-smpirun.
sim: deps
	$(call build_cfg,sim)

# run_tiers(<default|full>): for each MPI library in $(MPI): build, run the tier; with
# Open MPI also the sanitizer tier. Keeps going after a failure, then prints one summary
# line and fails if anything failed.
define run_tiers
	@summary=""; status=0; \
	run() { cfg=$$1; tier=$$2; \
	  echo "=== $$cfg: configure and build ($$(dir_of $$cfg))"; \
	  if ! $(MAKE) --no-print-directory build-cfg-$$cfg; then \
	    summary="$$summary $$cfg:BUILD-FAILED"; status=1; return; fi; \
	  echo "=== $$cfg: ctest -L '$$tier'"; \
	  if ctest --test-dir "$$(dir_of $$cfg)" --output-on-failure --no-tests=error \
	       -j $(CTEST_J) -L "$$tier"; then summary="$$summary $$cfg:passed"; \
	  else summary="$$summary $$cfg:FAILED"; status=1; fi; }; \
	dir_of() { case $$1 in openmpi) echo $(DIR_openmpi);; mpich) echo $(DIR_mpich);; \
	  asan) echo $(DIR_asan);; sim) echo $(DIR_sim);; esac; }; \
	for m in $(MPI); do \
	  case $$m in \
	    openmpi) run openmpi '$(TIER_$(1))'; run asan '$(TIER_asan)';; \
	    mpich) run mpich '$(TIER_$(1))';; \
	    sim) run sim '$(TIER_$(1))';; \
	    *) echo "unknown MPI library '$$m' (openmpi, mpich or sim)" >&2; \
	       summary="$$summary $$m:UNKNOWN"; status=1;; \
	  esac; \
	done; \
	echo "=== make $@ summary:$$summary => $$( [ $$status = 0 ] && echo PASSED || echo FAILED )"; \
	exit $$status
endef

.PHONY: build-cfg-openmpi build-cfg-mpich build-cfg-asan build-cfg-sim
build-cfg-openmpi build-cfg-mpich build-cfg-asan build-cfg-sim: build-cfg-%:
	$(call build_cfg,$*)

test: deps
	$(call run_tiers,default)

test-full: deps
	$(call run_tiers,full)

check-full: build
	ctest --test-dir $(BUILD) --output-on-failure --no-tests=error -j $(CTEST_J) -L '^checkfull$$'

# The benchmark: only convoy-bench, convoy-dropin-bench and libconvoy_pmpi are built (not
# the tests), then tools/bench.sh runs the default suite (4 processes as 2 virtual nodes of
# 2) and the drop-in rows (preloaded MPI_* against PMPI_*); results in bench-results/.
bench: deps
	cmake -S . -B $(DIR_openmpi) -G Ninja $(OPTS_openmpi) $(CMAKE_ARGS)
	cmake --build $(DIR_openmpi) -j $(JOBS) --target convoy-bench convoy-dropin-bench convoy_pmpi
	@echo "+ tools/bench.sh"; BUILD=$(DIR_openmpi) bash tools/bench.sh

format:
	@if command -v clang-format > /dev/null; then \
	  find src include bench tests tools -name '*.[ch]' 2>/dev/null | xargs -r clang-format -i; \
	else echo "make format: clang-format not installed, nothing done"; fi

clean:
	rm -rf $(BUILD) $(BUILD_MPICH) $(BUILD_ASAN) $(BUILD_SIM)

# The papers' experiments on simulated clusters (sim/README.md): SIM_SET=default (a few
# minutes), full (the papers' scales, hours) or group names (sim/run --list); results in
# sim/results/<set>/. Calibration against papers/004: sim/calibrate.
SIM_SET ?= default
.PHONY: sim-experiments
sim-experiments: sim
	python3 sim/run --set $(SIM_SET)
