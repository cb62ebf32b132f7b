#!/usr/bin/env bash
# The install test: run.sh <build-dir> <project-dir> <mpicc> <mpiexec>
# Installs <build-dir> into a scratch prefix, then builds the project in <project-dir>
# against it twice -- with find_package(convoy) (shared and static library) and with
# `pkg-config --cflags --libs convoy` (mpicc and plain cc) -- and runs each on 2 processes.
# CONVOY_MPIEXEC_PREFLAGS: launcher flags (space separated); CMAKE_GENERATOR optional.
set -euo pipefail

build=$(cd "$1" && pwd)
project=$(cd "$2" && pwd)
mpicc=$3
mpiexec=$4
read -r -a preflags <<< "${CONVOY_MPIEXEC_PREFLAGS:-}"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/convoy-install-test.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
prefix=$scratch/prefix

run() { echo "+ $*"; "$@"; }
mpirun() { run "$mpiexec" "${preflags[@]}" -n 2 "$@"; }

run cmake --install "$build" --prefix "$prefix"

# 1. find_package(convoy), with the MPI Convoy was built with.
run cmake -S "$project" -B "$scratch/build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DMPI_C_COMPILER="$mpicc" -DMPIEXEC_EXECUTABLE="$mpiexec" -DCMAKE_BUILD_TYPE=Release
run cmake --build "$scratch/build"
mpirun "$scratch/build/use_convoy"
mpirun "$scratch/build/use_convoy_static"
# The shared library must be the installed one, not the build tree's.
if command -v ldd > /dev/null; then
    lib=$(ldd "$scratch/build/use_convoy" | awk '/libconvoy\.so/ {print $3}')
    echo "use_convoy loads $lib"
    case $lib in "$prefix"/*) ;; *) echo "FAIL: not the installed libconvoy.so" >&2; exit 1 ;; esac
fi

# The drop-in library beside libconvoy, finding the installed libconvoy by its RPATH.
pmpi=$(find "$prefix" -name 'libconvoy_pmpi.so' | head -n 1)
[ -n "$pmpi" ] || { echo "FAIL: libconvoy_pmpi.so not installed" >&2; exit 1; }
if command -v ldd > /dev/null; then
    dep=$(ldd "$pmpi" | awk '/libconvoy\.so/ {print $3}')
    echo "libconvoy_pmpi.so loads $dep"
    case $dep in "$prefix"/*) ;; *) echo "FAIL: libconvoy_pmpi.so does not load the installed libconvoy.so" >&2; exit 1 ;; esac
fi

# 2. pkg-config, with mpicc and with a plain C compiler.
pcdir=$(dirname "$(find "$prefix" -name convoy.pc | head -n 1)")
export PKG_CONFIG_PATH="$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
libdir=$(pkg-config --variable=libdir convoy)
read -r -a pcflags <<< "$(pkg-config --cflags --libs convoy)"
run "$mpicc" -o "$scratch/use_convoy_pc" "$project/main.c" "${pcflags[@]}" -Wl,-rpath,"$libdir"
mpirun "$scratch/use_convoy_pc"
run "${CC:-cc}" -o "$scratch/use_convoy_pc_cc" "$project/main.c" "${pcflags[@]}" \
    -Wl,-rpath,"$libdir"
mpirun "$scratch/use_convoy_pc_cc"

echo "install test passed"
