# The two set-up commands of the README: `make run` and `make test`.
# Both install what is missing (scripts/install-deps.sh), configure and build.
BUILD_DIR ?= build
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo
JOBS ?= $(shell nproc)

.PHONY: all deps configure build web test bench bench-slurm run demo asan clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@test -f $(BUILD_DIR)/build.ninja || cmake -S . -B $(BUILD_DIR) -G Ninja $(CMAKE_FLAGS)

build: configure web
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The portal (web/): npm ci from the lockfile, then Vite, into web/dist.
web: deps
	@scripts/build-web.sh

# A test that hangs fails after 5 minutes (the whole suite takes about one)
# instead of holding CI until its own limit.
test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure --timeout 300 -j $(JOBS)

bench: build
	bench/run_all.sh $(BUILD_DIR)

# The same job stream through Debian's Slurm on this machine (installs
# slurm-wlm and munge; needs root), to compare with agent_scale's figures.
bench-slurm:
	bench/slurm_compare.sh

# Starts Tessera on this machine (the control plane, with this machine as a node;
# a simulated GPU inventory without an NVIDIA driver), data under ./tessera-data.
# UP_FLAGS passes flags to `tessera up`: make run UP_FLAGS='--token-auth-file users.csv'
UP_FLAGS ?=
run: build
	$(BUILD_DIR)/src/tessera up $(UP_FLAGS)

# The scheduler core alone on a generated fleet, printing what it decided.
demo: build
	$(BUILD_DIR)/src/tessera demo

# The whole suite under AddressSanitizer and UndefinedBehaviorSanitizer.
asan:
	$(MAKE) test BUILD_DIR=build-asan CMAKE_FLAGS="-DCMAKE_BUILD_TYPE=Debug -DTESSERA_SANITIZE=ON -DTESSERA_BUILD_BENCH=OFF"

clean:
	rm -rf $(BUILD_DIR) build-asan
