# Resolves TESSERA_WITH_<X> (AUTO | ON | OFF) into TESSERA_HAVE_<X>.
# AUTO builds the backend when its dependency is found; ON makes it required.
# TESSERA_REQUIRE_TEST_BACKENDS=ON requires MPI and SimGrid whatever their
# mode; a missing one fails configuring, naming its Debian packages.
function(tessera_resolve_backend name found packages)
  set(mode "${TESSERA_WITH_${name}}")
  string(TOUPPER "${mode}" mode)
  if(TESSERA_REQUIRE_TEST_BACKENDS AND NOT name STREQUAL "CUDA")
    if(mode STREQUAL "OFF" OR mode STREQUAL "FALSE" OR mode STREQUAL "0")
      message(FATAL_ERROR "TESSERA_REQUIRE_TEST_BACKENDS=ON needs ${name}, but TESSERA_WITH_${name}=${mode}")
    elseif(NOT ${found})
      message(FATAL_ERROR "TESSERA_REQUIRE_TEST_BACKENDS=ON needs ${name}, which was not found (apt-get install "
                          "${packages}): its tests would silently drop out")
    endif()
  endif()
  if(mode STREQUAL "OFF" OR mode STREQUAL "FALSE" OR mode STREQUAL "0")
    set(TESSERA_HAVE_${name} OFF PARENT_SCOPE)
  elseif(${found})
    set(TESSERA_HAVE_${name} ON PARENT_SCOPE)
  elseif(mode STREQUAL "ON" OR mode STREQUAL "TRUE" OR mode STREQUAL "1")
    message(FATAL_ERROR "TESSERA_WITH_${name}=ON but its dependency was not found")
  else()
    set(TESSERA_HAVE_${name} OFF PARENT_SCOPE)
  endif()
endfunction()

find_package(PkgConfig QUIET)
if(NOT TESSERA_WITH_MPI STREQUAL "OFF")
  find_package(MPI QUIET COMPONENTS C)
endif()
tessera_resolve_backend(MPI MPI_C_FOUND "libopenmpi-dev openmpi-bin")

if(NOT TESSERA_WITH_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
endif()
tessera_resolve_backend(CUDA CUDAToolkit_FOUND "the CUDA toolkit")

if(NOT TESSERA_WITH_SIMGRID STREQUAL "OFF" AND PkgConfig_FOUND)
  pkg_check_modules(SIMGRID QUIET IMPORTED_TARGET simgrid>=3.32)
endif()
tessera_resolve_backend(SIMGRID SIMGRID_FOUND "libsimgrid-dev")

message(STATUS "tessera backends: MPI=${TESSERA_HAVE_MPI} CUDA=${TESSERA_HAVE_CUDA} SimGrid=${TESSERA_HAVE_SIMGRID}")
