# Fails when clang-format would change any C, CUDA or header file.
file(GLOB_RECURSE files
  ${ROOT}/include/*.h ${ROOT}/src/*.[ch] ${ROOT}/kernels/*.cu
  ${ROOT}/kernels/*.cuh ${ROOT}/kernels/*.c
  ${ROOT}/kernels/*.h ${ROOT}/apps/*.[ch] ${ROOT}/tests/*.[ch]
  ${ROOT}/bench/*.[ch] ${ROOT}/bench/*.cu)
set(bad "")
foreach(f ${files})
  execute_process(COMMAND ${CLANG_FORMAT} --dry-run --Werror ${f}
    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT rc EQUAL 0)
    list(APPEND bad ${f})
  endif()
endforeach()
if(bad)
  string(REPLACE ";" "\n  " bad "${bad}")
  message(FATAL_ERROR "not clang-formatted (run clang-format -i):\n  ${bad}")
endif()
list(LENGTH files count)
message(STATUS "${count} files formatted")
