# Finds MPI and works out how to launch it on this machine.
#
# Sets (cache, so scripts and subprojects can read them from CMakeCache.txt):
#   CONVOY_MPI_FLAVOUR       openmpi | mpich | unknown
#   CONVOY_MPIEXEC_PREFLAGS  launcher flags every run needs here (before -n)
#   CONVOY_MPI_TEST_ENV      environment (VAR=VAL list) every run needs here
# and writes ${CMAKE_BINARY_DIR}/convoy-mpirun, a launcher wrapper with both applied:
#   build/convoy-mpirun -n 4 build/bin/convoy-bench ...
#
# On Debian both Open MPI and MPICH are installed side by side, and /usr/bin/mpiexec is
# whichever the alternatives system points at. Pick the library with
# -DMPI_C_COMPILER=/usr/bin/mpicc.<flavour>; the matching mpiexec.<flavour> is then chosen
# unless MPIEXEC_EXECUTABLE is given, and a launcher of the other flavour is an error (the
# ranks would all start as singletons).

if(CONVOY_SIMGRID)
  include(ConvoySimGrid) # SMPI instead of a real MPI library: defines MPI::MPI_C itself
  return()
endif()

if(MPI_C_COMPILER AND NOT MPIEXEC_EXECUTABLE)
  get_filename_component(_convoy_cc_name "${MPI_C_COMPILER}" NAME)
  get_filename_component(_convoy_cc_dir "${MPI_C_COMPILER}" DIRECTORY)
  if(_convoy_cc_name MATCHES "^mpicc(\\..+)$" AND EXISTS "${_convoy_cc_dir}/mpiexec${CMAKE_MATCH_1}")
    set(MPIEXEC_EXECUTABLE "${_convoy_cc_dir}/mpiexec${CMAKE_MATCH_1}" CACHE FILEPATH
        "Executable for running MPI programs.")
  endif()
endif()

set(MPI_DETERMINE_LIBRARY_VERSION TRUE)
find_package(MPI REQUIRED COMPONENTS C)

function(_convoy_flavour_of text out)
  if(text MATCHES "Open MPI|OpenRTE|Open RTE|open-mpi")
    set(${out} openmpi PARENT_SCOPE)
  elseif(text MATCHES "MPICH|HYDRA|Hydra")
    set(${out} mpich PARENT_SCOPE)
  else()
    set(${out} unknown PARENT_SCOPE)
  endif()
endfunction()

# The library's flavour: MPI_Get_library_version, else the wrapper's own report.
set(_convoy_lib_flavour unknown)
if(MPI_C_LIBRARY_VERSION_STRING)
  _convoy_flavour_of("${MPI_C_LIBRARY_VERSION_STRING}" _convoy_lib_flavour)
endif()
# The launcher's flavour: `mpiexec --version`.
set(_convoy_exec_flavour unknown)
if(MPIEXEC_EXECUTABLE)
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version
                  OUTPUT_VARIABLE _convoy_exec_version ERROR_VARIABLE _convoy_exec_version
                  TIMEOUT 20 RESULT_VARIABLE _convoy_rc)
  _convoy_flavour_of("${_convoy_exec_version}" _convoy_exec_flavour)
else()
  message(FATAL_ERROR "Convoy: no MPI launcher found; set MPIEXEC_EXECUTABLE")
endif()
if(_convoy_lib_flavour STREQUAL "unknown")
  set(_convoy_lib_flavour ${_convoy_exec_flavour})
endif()
if(NOT _convoy_exec_flavour STREQUAL "unknown"
   AND NOT _convoy_exec_flavour STREQUAL _convoy_lib_flavour)
  message(FATAL_ERROR
    "Convoy: the MPI library is ${_convoy_lib_flavour} (${MPI_C_COMPILER}) but the launcher "
    "${MPIEXEC_EXECUTABLE} is ${_convoy_exec_flavour}. Pass a matching "
    "-DMPIEXEC_EXECUTABLE=... (e.g. /usr/bin/mpiexec.${_convoy_lib_flavour}).")
endif()

set(CONVOY_MPI_FLAVOUR ${_convoy_lib_flavour} CACHE STRING "MPI library flavour (detected)" FORCE)
mark_as_advanced(CONVOY_MPI_FLAVOUR)

if(CONVOY_MPI_FLAVOUR STREQUAL "openmpi")
  # Tests run as root in containers on 2 cores with up to 8 ranks: Open MPI refuses both
  # unless told. yield_when_idle keeps oversubscribed ranks from starving each other.
  # op=^avx: Open MPI 4.1's AVX reduction component saturates 8- and 16-bit integer sums.
  # vader single copy (CMA) needs ptrace rights that containers often lack.
  set(_preflags --oversubscribe --allow-run-as-root)
  set(_env
    OMPI_ALLOW_RUN_AS_ROOT=1
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    OMPI_MCA_mpi_yield_when_idle=1
    OMPI_MCA_op=^avx
    OMPI_MCA_rmaps_base_oversubscribe=1
    OMPI_MCA_btl_vader_single_copy_mechanism=none)
elseif(CONVOY_MPI_FLAVOUR STREQUAL "mpich")
  set(_preflags)
  set(_env)
else()
  message(WARNING "Convoy: unrecognised MPI library; tests get no launcher settings")
  set(_preflags)
  set(_env)
endif()
set(CONVOY_MPIEXEC_PREFLAGS "${_preflags}" CACHE STRING
    "Launcher flags Convoy's tests and tools pass before -n (detected)" FORCE)
set(CONVOY_MPI_TEST_ENV "${_env}" CACHE STRING
    "Environment Convoy's tests and tools run MPI programs with (detected)" FORCE)
mark_as_advanced(CONVOY_MPIEXEC_PREFLAGS CONVOY_MPI_TEST_ENV)

string(REGEX REPLACE "[\n\t]" " " _convoy_version_line "${MPI_C_LIBRARY_VERSION_STRING}")
string(REGEX REPLACE " +" " " _convoy_version_line "${_convoy_version_line}")
string(STRIP "${_convoy_version_line}" _convoy_version_line)
string(SUBSTRING "${_convoy_version_line}" 0 120 _convoy_version_line)
message(STATUS "Convoy MPI: flavour ${CONVOY_MPI_FLAVOUR} (MPI ${MPI_C_VERSION})")
message(STATUS "Convoy MPI: library version: ${_convoy_version_line}")
message(STATUS "Convoy MPI: wrapper    ${MPI_C_COMPILER}")
message(STATUS "Convoy MPI: includes   ${MPI_C_INCLUDE_DIRS}")
message(STATUS "Convoy MPI: libraries  ${MPI_C_LIBRARIES}")
string(REPLACE ";" " " _convoy_preflags_sh "${CONVOY_MPIEXEC_PREFLAGS}")
message(STATUS "Convoy MPI: launcher   ${MPIEXEC_EXECUTABLE} ${_convoy_preflags_sh}")

# Launcher wrapper for scripts and by-hand runs.
set(_convoy_env_lines "")
foreach(e IN LISTS CONVOY_MPI_TEST_ENV)
  string(APPEND _convoy_env_lines "export '${e}'\n")
endforeach()
file(WRITE ${CMAKE_BINARY_DIR}/convoy-mpirun
"#!/bin/sh
# Generated by CMake (cmake/ConvoyMPI.cmake): runs the MPI launcher this build was
# configured with (${CONVOY_MPI_FLAVOUR}), with the flags and environment needed here.
${_convoy_env_lines}exec '${MPIEXEC_EXECUTABLE}' ${_convoy_preflags_sh} \"$@\"
")
file(CHMOD ${CMAKE_BINARY_DIR}/convoy-mpirun FILE_PERMISSIONS OWNER_READ OWNER_WRITE
     OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
