# check_layering.cmake — builds every layering probe (see CMakeLists.txt here) in one ninja call
# that keeps going past failures (-k 0: the probes compile in parallel, and the build's start-up
# is paid once, not per probe), then checks each verdict: a FORBIDDEN probe must fail because its
# header is not found, and leave no object; an ALLOWED probe must leave its object. Prints one line
# per probe and fails when any verdict is wrong.
set(targets "")
foreach(probe IN LISTS PROBES)
  string(REPLACE "|" ";" parts "${probe}")
  list(GET parts 0 name)
  list(APPEND targets ${name})
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${targets} -- -k 0
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
set(wrong 0)
foreach(probe IN LISTS PROBES)
  string(REPLACE "|" ";" parts "${probe}")
  list(GET parts 0 name)
  list(GET parts 1 header)
  list(GET parts 2 verdict)
  set(object ${BUILD_DIR}/tests/layering/CMakeFiles/${name}.dir/${name}.cpp.o)
  # The probe's one include is line 2, column 10 of its generated source.
  string(FIND "${out}" "${name}.cpp:2:10: fatal error: ${header}: No such file or directory"
         not_found)
  # A failed compile can leave an older object behind: ninja's FAILED line is the verdict then.
  string(REGEX MATCH "FAILED: [^\n]*${name}\\.dir/${name}\\.cpp\\.o" failed "${out}")
  if(verdict STREQUAL "FORBIDDEN")
    if(NOT not_found EQUAL -1 AND failed AND NOT EXISTS ${object})
      message(STATUS "ok    ${name}: ${header} is out of reach")
    else()
      message(STATUS "WRONG ${name}: ${header} should be out of reach")
      math(EXPR wrong "${wrong} + 1")
    endif()
  else()
    if(EXISTS ${object} AND not_found EQUAL -1 AND NOT failed)
      message(STATUS "ok    ${name}: ${header} compiles")
    else()
      message(STATUS "WRONG ${name}: ${header} should compile")
      math(EXPR wrong "${wrong} + 1")
    endif()
  endif()
endforeach()
if(wrong GREATER 0)
  message(FATAL_ERROR "layering: ${wrong} probe(s) with the wrong verdict (build rc ${rc})\n${out}")
endif()
