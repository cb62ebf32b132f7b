# SimGrid SMPI in place of an MPI library (CONVOY_SIMGRID=ON, `make sim`, build-sim/).
#
# smpicc is `cc` plus three things (see `smpicc -show`): it force-includes smpi_helpers.h
# (sleep, nanosleep, clock_gettime, malloc, getopt... become SMPI's, so that a rank that
# sleeps yields to the simulator and its clock is simulated), adds SMPI's include directory,
# and links a program as a shared object against libsimgrid (smpirun loads it once per
# simulated rank, which privatises every global of the program and of the static libconvoy
# linked into it). Convoy keeps the plain C compiler and gives exactly these flags to the
# MPI::MPI_C target, so that the MPI code gets them while convoy-check (no MPI) stays an
# ordinary program, unchanged; convoy_sim_program() adds the shared-object link of a
# simulated program. The result is what smpicc would build.
#
# Sets CONVOY_MPI_FLAVOUR=simgrid and writes ${CMAKE_BINARY_DIR}/convoy-smpirun (a copy of
# tools/convoy-smpirun bound to this build).
find_program(CONVOY_SMPICC smpicc)
find_program(CONVOY_SMPIRUN smpirun)
find_file(CONVOY_SMPI_HELPERS smpi/smpi_helpers.h)
find_library(CONVOY_SIMGRID_LIB simgrid)
if(NOT CONVOY_SMPICC OR NOT CONVOY_SMPIRUN OR NOT CONVOY_SMPI_HELPERS OR NOT CONVOY_SIMGRID_LIB)
  message(FATAL_ERROR "Convoy: CONVOY_SIMGRID needs SimGrid SMPI (Debian libsimgrid-dev: "
                      "smpicc, smpirun, smpi/smpi_helpers.h, libsimgrid); `make sim` installs it")
endif()
get_filename_component(_convoy_smpi_inc "${CONVOY_SMPI_HELPERS}" DIRECTORY)
execute_process(COMMAND ${CONVOY_SMPICC} --version OUTPUT_VARIABLE _convoy_sg_version
                OUTPUT_STRIP_TRAILING_WHITESPACE)

# Every object may end up in a simulated program, which is a shared object.
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
add_library(MPI::MPI_C INTERFACE IMPORTED)
target_include_directories(MPI::MPI_C INTERFACE ${_convoy_smpi_inc})
target_compile_options(MPI::MPI_C INTERFACE -fPIC "SHELL:-include ${CONVOY_SMPI_HELPERS}")
target_link_libraries(MPI::MPI_C INTERFACE ${CONVOY_SIMGRID_LIB})
set(MPI_C_INCLUDE_DIRS ${_convoy_smpi_inc})
set(MPI_C_LIBRARIES ${CONVOY_SIMGRID_LIB})
set(MPIEXEC_EXECUTABLE ${CONVOY_SMPIRUN})

set(CONVOY_MPI_FLAVOUR simgrid CACHE STRING "MPI library flavour (detected)" FORCE)
set(CONVOY_MPIEXEC_PREFLAGS "" CACHE STRING "Launcher flags (none for SMPI)" FORCE)
set(CONVOY_MPI_TEST_ENV "" CACHE STRING "Launcher environment (none for SMPI)" FORCE)
mark_as_advanced(CONVOY_MPI_FLAVOUR CONVOY_MPIEXEC_PREFLAGS CONVOY_MPI_TEST_ENV)

# A program smpirun can run: position-independent, linked as a shared object.
function(convoy_sim_program target)
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_link_options(${target} PRIVATE -shared)
endfunction()

configure_file(${PROJECT_SOURCE_DIR}/tools/convoy-smpirun ${CMAKE_BINARY_DIR}/convoy-smpirun
               COPYONLY)
message(STATUS "Convoy MPI: SimGrid SMPI (${_convoy_sg_version}), ${CONVOY_SIMGRID_LIB}, "
               "launcher ${CMAKE_BINARY_DIR}/convoy-smpirun")
