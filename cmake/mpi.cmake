# mpi.cmake - MPI for the MPI transport (src/net/mpi.c), which is optional:
# without an MPI library everything builds and works as before, and
# net_init_mpi returns -ENOSYS.
#
# Sets UPVM_MPI (ON when the transport is built), UPVM_MPI_FLAVOR ("Open MPI
# 4.1.4", "MPICH 4.0.2", else "MPI <standard version>") and, for the tests,
# UPVM_MPIEXEC, UPVM_MPIEXEC_FLAGS (the flags every run needs) and
# UPVM_MPIEXEC_NP (the flag before the number of ranks).
#
# Debian installs mpicc and mpirun as alternatives: with both Open MPI and
# MPICH installed they may name either.  So, unless MPI_C_COMPILER is given,
# the explicit mpicc.openmpi is used when present (the tests pass Open MPI's
# launcher flags), and the launcher is taken from the same family as the
# wrapper (mpicc.mpich -> mpiexec.mpich), never whatever mpiexec names.
set(UPVM_MPI OFF)
if(NOT UPVM_WITH_MPI)
  message(STATUS "UPVM: MPI transport: no (UPVM_WITH_MPI=OFF)")
  return()
endif()

if(NOT MPI_C_COMPILER)
  find_program(UPVM_MPICC_OPENMPI mpicc.openmpi)
  if(UPVM_MPICC_OPENMPI)
    set(MPI_C_COMPILER ${UPVM_MPICC_OPENMPI} CACHE FILEPATH "MPI C compiler wrapper")
  endif()
endif()
if(MPI_C_COMPILER MATCHES "\\.(openmpi|mpich)$" AND NOT MPIEXEC_EXECUTABLE)
  find_program(MPIEXEC_EXECUTABLE NAMES mpirun.${CMAKE_MATCH_1} mpiexec.${CMAKE_MATCH_1})
endif()
find_package(MPI COMPONENTS C QUIET)
if(NOT MPI_C_FOUND)
  message(STATUS "UPVM: MPI transport: no (install openmpi-bin libopenmpi-dev)")
  return()
endif()
set(UPVM_MPI ON)

# Which library: mpi.h says (FindMPI knows only the standard's version).
set(UPVM_MPI_FLAVOR "MPI ${MPI_C_VERSION}")
foreach(dir ${MPI_C_HEADER_DIR} ${MPI_C_INCLUDE_DIRS})
  if(EXISTS ${dir}/mpi.h)
    file(STRINGS ${dir}/mpi.h defs REGEX "^#define (OMPI_[A-Z]+_VERSION|MPICH_VERSION) ")
    if(defs MATCHES "OMPI_MAJOR_VERSION ([0-9]+)")
      set(v ${CMAKE_MATCH_1})
      string(REGEX MATCH "OMPI_MINOR_VERSION ([0-9]+)" m "${defs}")
      string(APPEND v ".${CMAKE_MATCH_1}")
      string(REGEX MATCH "OMPI_RELEASE_VERSION ([0-9]+)" m "${defs}")
      string(APPEND v ".${CMAKE_MATCH_1}")
      set(UPVM_MPI_FLAVOR "Open MPI ${v}")
    elseif(defs MATCHES "MPICH_VERSION \"([^\"]+)\"")
      set(UPVM_MPI_FLAVOR "MPICH ${CMAKE_MATCH_1}")
    endif()
    break()
  endif()
endforeach()
message(STATUS "UPVM: MPI transport: yes (${UPVM_MPI_FLAVOR})")

# The launcher of the MPI tests and benchmark.  Open MPI refuses root
# without --allow-run-as-root, binds every rank to one core of an
# oversubscribed machine without --bind-to none (ranks that spin then take
# turns by time slices), and refuses more ranks than cores without
# --oversubscribe.
set(UPVM_MPIEXEC "${MPIEXEC_EXECUTABLE}")
set(UPVM_MPIEXEC_NP ${MPIEXEC_NUMPROC_FLAG})
set(UPVM_MPIEXEC_FLAGS "")
if(UPVM_MPI_FLAVOR MATCHES "^Open MPI")
  set(UPVM_MPIEXEC_FLAGS --allow-run-as-root --oversubscribe --bind-to none)
endif()
