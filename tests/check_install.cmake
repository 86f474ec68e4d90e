# Installs the build tree into WORK/prefix, moves the prefix to WORK/moved
# (an install must not remember where it was made), then configures, builds
# and runs tests/consumer against the moved prefix three ways:
#   cmake      find_package(tilefmm), both libraries;
#   nocuda     the same with the CUDA toolkit hidden (nvcc off PATH,
#              CUDAToolkit_ROOT bogus, its prefixes ignored): the consumer
#              fails if the package looks for the toolkit at all;
#   pkgconfig  pkg-config, the shared library.
# Also checks that tilefmm.pc names no path of the build machine.
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed")
endif()
file(RENAME ${WORK}/prefix ${WORK}/moved)
set(prefix ${WORK}/moved)

file(GLOB pc ${prefix}/lib*/pkgconfig/tilefmm.pc)
file(READ "${pc}" pc_text)
foreach(path ${BUILD} ${WORK} /usr/local/cuda)
  string(FIND "${pc_text}" "${path}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "tilefmm.pc names ${path}:\n${pc_text}")
  endif()
endforeach()

# PATH without the CUDA toolkit's bin directories.
set(path_nocuda "")
string(REPLACE ":" ";" dirs "$ENV{PATH}")
foreach(d ${dirs})
  if(NOT d MATCHES "cuda" AND NOT EXISTS ${d}/nvcc)
    list(APPEND path_nocuda ${d})
  endif()
endforeach()
string(REPLACE ";" ":" path_nocuda "${path_nocuda}")

foreach(mode cmake nocuda pkgconfig)
  set(bdir ${WORK}/build-${mode})
  set(env "")
  set(extra "")
  if(mode STREQUAL "nocuda")
    set(env ${CMAKE_COMMAND} -E env PATH=${path_nocuda} --unset=CUDA_PATH
      --unset=CUDAToolkit_ROOT --unset=CUDACXX --unset=CUDAARCHS)
    set(extra -DCUDAToolkit_ROOT=/nonexistent
      -DCMAKE_IGNORE_PREFIX_PATH=/usr/local/cuda -DTFMM_EXPECT_NO_CUDA=ON)
  endif()
  execute_process(COMMAND ${env} ${CMAKE_COMMAND} -S ${SRC} -B ${bdir}
      -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${prefix} -DMODE=${mode} ${extra}
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configuring the consumer (${mode}) failed")
  endif()
  execute_process(COMMAND ${env} ${CMAKE_COMMAND} --build ${bdir}
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "building the consumer (${mode}) failed")
  endif()
  foreach(exe consumer_shared consumer_static)
    if(EXISTS ${bdir}/${exe})
      execute_process(COMMAND ${bdir}/${exe} RESULT_VARIABLE rc)
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${exe} (${mode}) failed")
      endif()
    elseif(NOT (mode STREQUAL "pkgconfig" AND exe STREQUAL "consumer_static"))
      message(FATAL_ERROR "${exe} (${mode}) was not built")
    endif()
  endforeach()
endforeach()
if(CLI AND NOT EXISTS ${prefix}/bin/tilefmm)
  message(FATAL_ERROR "the CLI was not installed")
endif()
