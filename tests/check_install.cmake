# Installs the build tree into WORK/prefix, then configures, builds and runs
# tests/consumer against it twice: through find_package(tilefmm) and through
# pkg-config.
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed")
endif()
foreach(mode cmake pkgconfig)
  set(bdir ${WORK}/build-${mode})
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${bdir} -G ${GENERATOR}
      -DCMAKE_PREFIX_PATH=${WORK}/prefix -DMODE=${mode}
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configuring the consumer (${mode}) failed")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${bdir} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "building the consumer (${mode}) failed")
  endif()
  foreach(exe consumer_shared consumer_static)
    if(EXISTS ${bdir}/${exe})
      execute_process(COMMAND ${bdir}/${exe} RESULT_VARIABLE rc)
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${exe} (${mode}) failed")
      endif()
    endif()
  endforeach()
endforeach()
if(NOT EXISTS ${WORK}/prefix/bin/tilefmm)
  message(FATAL_ERROR "the CLI was not installed")
endif()
