# Wraps the two commands of the README. Everything is built in build/.
#   make bench  - set up, build, and run pccl-bench on 4 local ranks
#   make test   - set up, build, and run the whole test suite
#   make install PREFIX=/usr/local
BUILD ?= build
PREFIX ?= /usr/local
NP ?= 4
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all setup build bench test install clean

all: build

setup:
	@bash scripts/setup.sh

build: setup
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

bench: build
	scripts/mpirun.sh -np $(NP) $(BUILD)/bin/pccl-bench -c allgather,reducescatter,allreduce \
	  -b 1K -e 64M --csv $(BUILD)/pccl-bench.csv

test: build
	cd $(BUILD) && ctest --output-on-failure --timeout 600

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD)
