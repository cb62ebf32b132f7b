# Test helpers shared by tests/unit, tests/mpi and the benchmark's smoke tests.
#
#   convoy_add_mpi_test(<name> NP <n> COMMAND <target-or-path> [ARGS a b ...]
#                       [ENV VAR=VAL ...] [TIMEOUT seconds] [LABELS l1 l2 ...])
#     Runs  ${MPIEXEC_EXECUTABLE} ${CONVOY_MPIEXEC_PREFLAGS} -n <n> <command> <args>
#     with the launcher's environment for this MPI flavour (CONVOY_MPI_TEST_ENV) plus ENV.
#     Also labelled "mpi"; PROCESSORS=max(<n>, 2) and RESOURCE_LOCK convoy_mpi, so that
#     under ctest -j two MPI jobs never oversubscribe the machine at the same time and, at
#     make test's -j 2, no other test runs beside one (the checker sweeps run two at a time
#     in between).
#
#   convoy_add_test(<name> COMMAND <target-or-path> [args ...] [ARGS more ...]
#                   [ENV VAR=VAL ...] [TIMEOUT seconds] [LABELS l1 l2 ...])
#     A test without MPI.
#
# TIMEOUT defaults to 300 s for both. Tiers are labels: "default" (make test), "full"
# (make test-full), "asan" (the sanitizer tier, run in build-asan/), "checkfull"
# (make check-full).
#
# In a CONVOY_SANITIZE build every test also gets ASAN/LSAN/UBSAN options, with leak
# suppressions for the MPI libraries' own allocations (cmake/lsan.supp); an ENV entry of
# the test for the same variable overrides them (ASAN_/LSAN_OPTIONS keep
# fast_unwind_on_malloc=0 unless the test sets it).
include_guard(GLOBAL)

set(CONVOY_TEST_DEFAULT_TIMEOUT 300)

# The MPI libraries are built without frame pointers: only the slow unwinder gives leak
# stacks deep enough to reach libmpi and match the suppressions. Open MPI unloads its
# components at finalize, which would leave their frames as "<unknown module>".
set(CONVOY_SANITIZER_TEST_ENV)
if(CONVOY_SANITIZE)
  set(CONVOY_SANITIZER_TEST_ENV
    "ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0"
    "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/cmake/lsan.supp:print_suppressions=0:fast_unwind_on_malloc=0"
    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
  if(CONVOY_MPI_FLAVOUR STREQUAL "openmpi")
    list(APPEND CONVOY_SANITIZER_TEST_ENV OMPI_MCA_mca_base_component_disable_dlclose=1)
  endif()
endif()

function(_convoy_test_properties name timeout labels env)
  if(NOT timeout)
    set(timeout ${CONVOY_TEST_DEFAULT_TIMEOUT})
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${timeout})
  if(labels)
    set_property(TEST ${name} APPEND PROPERTY LABELS ${labels})
  endif()
  set(all_env ${CONVOY_SANITIZER_TEST_ENV})
  foreach(e IN LISTS env)
    # A test's own ASAN_/LSAN_OPTIONS replace the defaults above but keep the slow
    # unwinder, without which the MPI libraries' leaks escape their suppressions.
    if(CONVOY_SANITIZE AND e MATCHES "^(ASAN|LSAN)_OPTIONS="
       AND NOT e MATCHES "fast_unwind_on_malloc")
      string(APPEND e ":fast_unwind_on_malloc=0")
    endif()
    list(APPEND all_env "${e}")
  endforeach()
  if(all_env)
    set_property(TEST ${name} PROPERTY ENVIRONMENT ${all_env})
  endif()
endfunction()

function(convoy_add_mpi_test name)
  cmake_parse_arguments(PARSE_ARGV 1 A "" "NP;COMMAND;TIMEOUT" "ARGS;ENV;LABELS")
  if(A_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "convoy_add_mpi_test(${name}): unknown arguments ${A_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT A_NP OR NOT A_COMMAND)
    message(FATAL_ERROR "convoy_add_mpi_test(${name}): NP and COMMAND are required")
  endif()
  if(TARGET ${A_COMMAND})
    set(cmd $<TARGET_FILE:${A_COMMAND}>)
  else()
    set(cmd ${A_COMMAND})
  endif()
  add_test(NAME ${name}
           COMMAND ${MPIEXEC_EXECUTABLE} ${CONVOY_MPIEXEC_PREFLAGS} -n ${A_NP}
                   ${MPIEXEC_PREFLAGS} ${cmd} ${MPIEXEC_POSTFLAGS} ${A_ARGS})
  _convoy_test_properties(${name} "${A_TIMEOUT}" "mpi;${A_LABELS}"
                          "${CONVOY_MPI_TEST_ENV};${A_ENV}")
  # One MPI test at a time, and (at least two processors) nothing else beside it at ctest
  # -j 2: its timing checks assume the cores are its own.
  set(procs ${A_NP})
  if(procs LESS 2)
    set(procs 2)
  endif()
  set_tests_properties(${name} PROPERTIES PROCESSORS ${procs} RESOURCE_LOCK convoy_mpi)
endfunction()

function(convoy_add_test name)
  cmake_parse_arguments(PARSE_ARGV 1 A "" "TIMEOUT" "COMMAND;ARGS;ENV;LABELS")
  if(A_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "convoy_add_test(${name}): unknown arguments ${A_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT A_COMMAND)
    message(FATAL_ERROR "convoy_add_test(${name}): COMMAND is required")
  endif()
  # add_test resolves a target name in the first COMMAND word to its file.
  add_test(NAME ${name} COMMAND ${A_COMMAND} ${A_ARGS})
  _convoy_test_properties(${name} "${A_TIMEOUT}" "${A_LABELS}" "${A_ENV}")
endfunction()
