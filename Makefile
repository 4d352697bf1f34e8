# Wraps the two commands of the README. Everything is built in build/.
#   make bench  - set up, build, and run pccl-bench on 4 local ranks
#   make test   - set up, build, and run the whole test suite
#   make test-sanitize - the suite again, built with AddressSanitizer and
#                 UndefinedBehaviorSanitizer in build-sanitize/ (CI runs it)
#   make test-tsan - the multi-threaded tests (the engine, pccl_comm_abort)
#                 under ThreadSanitizer in build-tsan/ (CI runs it)
#   make test-valgrind - a subset of the tests under Valgrind (CI runs it;
#                 skipped where valgrind is missing)
#   make test-mpich - built against Debian's MPICH in build-mpich/ (installed
#                 when missing; Open MPI stays the default), the MPI matrix
#                 up to 4 ranks and the drop-in's tests (CI runs it)
#   make install PREFIX=/usr/local
BUILD ?= build
PREFIX ?= /usr/local
NP ?= 4
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

SAN_BUILD ?= build-sanitize
TSAN_BUILD ?= build-tsan
MPICH_BUILD ?= build-mpich
# Only Open MPI's own lock order is suppressed (tests/sanitizers/tsan.supp).
TSAN_ENV = TSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitizers/tsan.supp:second_deadlock_stack=1:history_size=7
# Open MPI keeps its plugins loaded so that the leaks it leaves at exit can be
# traced to it and suppressed (tests/sanitizers/lsan.supp; nothing of
# pccl's is suppressed); the slow unwinder sees through MPI's frames.
SAN_ENV = OMPI_MCA_mca_base_component_disable_dlclose=1 \
  ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0 \
  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitizers/lsan.supp:print_suppressions=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

.PHONY: all setup build bench test test-sanitize test-tsan test-valgrind test-mpich install clean

all: build

setup:
	@bash scripts/setup.sh

build: setup
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

bench: build
	scripts/mpirun.sh -np $(NP) $(BUILD)/bin/pccl-bench -c allgather,reducescatter,allreduce \
	  -b 1K -e 64M --csv $(BUILD)/pccl-bench.csv

# -j: the tests of one process (unit, fuzz) run two at a time; the MPI tests
# ask for both cores (PROCESSORS 2) and run alone.
test: build
	cd $(BUILD) && ctest --output-on-failure --timeout 600 -j $(JOBS)

# The drop-in's and the Python tests load an instrumented library into programs that are
# not, which AddressSanitizer refuses; the fuzz targets are sanitized already.
# MPI tests on 6-8 ranks are left out: instrumented, they take 24 of the 33
# minutes the MPI tests need on 2 cores (1-5 ranks: about 10).
test-sanitize: setup
	cmake -S . -B $(SAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPCCL_SANITIZE=address,undefined >/dev/null
	cmake --build $(SAN_BUILD) -j $(JOBS)
	cd $(SAN_BUILD) && env $(SAN_ENV) ctest --output-on-failure --timeout 900 -j $(JOBS) -LE 'dropin|fuzz|python' -E 'np[678]'

test-tsan: setup
	cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPCCL_SANITIZE=thread >/dev/null
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target test_engine test_faults test_nonblocking
	cd $(TSAN_BUILD) && env $(TSAN_ENV) ctest --output-on-failure --timeout 900 -L threads -E 'np[678]'

test-valgrind: build
	bash tests/valgrind/run_valgrind.sh $(BUILD) || [ $$? -eq 77 ]

# MPICH busy-polls, so oversubscribed runs are slow: up to 4 ranks here (the
# non-blocking drop-in up to 3, 80-120 s each); the
# device code is left out (it does not depend on the MPI).
test-mpich: setup
	PCCL_SETUP_MPI=mpich bash scripts/setup.sh
	cmake -S . -B $(MPICH_BUILD) -DCMAKE_BUILD_TYPE=Release -DPCCL_CUDA=OFF \
	  -DMPI_C_COMPILER=mpicc.mpich -DMPI_Fortran_COMPILER=mpif90.mpich \
	  -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich >/dev/null
	cmake --build $(MPICH_BUILD) -j $(JOBS)
	cd $(MPICH_BUILD) && ctest --output-on-failure --timeout 600 -L 'mpi|dropin' \
	  -E 'np([5-9]|[1-9][0-9])|python|engine|emucluster|cuda|dropin_nb_check|dropin_nb_np4'

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(SAN_BUILD) $(TSAN_BUILD) $(MPICH_BUILD)
