# The two commands README.md opens with, plus the ones developers use every day.
JOBS ?= $(shell nproc)
BUILD := build/release

.PHONY: deps build demo test test-debug format bench clean

deps:
	scripts/install-deps.sh

build: deps
	cmake --preset release >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

# The demo trains data-parallel: DEMO_RANKS processes under mpiexec, each with its share of the cores.
DEMO_RANKS ?= 2
demo: build
	OMP_WAIT_POLICY=$${OMP_WAIT_POLICY:-passive} mpiexec -n $(DEMO_RANKS) $(BUILD)/apps/coretrain qa --demo --output_dir demo-out --overwrite_output_dir

test: build
	ctest --test-dir $(BUILD) -j $(JOBS) --output-on-failure

test-debug: deps
	cmake --preset debug >/dev/null
	cmake --build build/debug -j $(JOBS)
	ctest --test-dir build/debug -j $(JOBS) --output-on-failure

format:
	find src apps tests bench -name '*.cpp' -o -name '*.h' | xargs clang-format -i

clean:
	rm -rf build demo-out
