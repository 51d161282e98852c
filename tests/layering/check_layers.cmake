# The C++ layering check (docs/architecture.md "C++ layers"), run by ctest as "layering":
#
#   cmake -DMHA_SOURCE_DIR=<repository root> -P tests/layering/check_layers.cmake
#
# Reads every .hpp and .cpp under cpp/ and fails (a FATAL_ERROR naming file, line and include)
# when a file includes
#   * a header "mha/..." of a layer it may not use: each layer sees itself and the layers below
#     it, never one above (attention < formats < numpy < analysis < models < front ends);
#   * a third-party or system header outside its folder's list below (standard library headers,
#     e.g. <vector> or <cmath>, are always allowed);
#   * a quoted header that is neither "mha/..." nor a file beside it;
# and when a folder's CMakeLists.txt names the library of a layer that folder may not use, or a
# C++ file sits in a folder the check does not know.
# The build enforces the same order another way: each layer's include directory is its own
# folder, seen only by the targets that link it.
cmake_minimum_required(VERSION 3.18)

if(NOT MHA_SOURCE_DIR)
  get_filename_component(MHA_SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
endif()
set(_cpp "${MHA_SOURCE_DIR}/cpp")

# The layers, lowest first: the folder under cpp/ that holds each one's mha/ headers.
set(MHA_LAYERS attention formats numpy analysis models)

# Per folder under cpp/: the layers it may include, and the non-standard headers it may use
# (a prefix such as "Eigen/" matches every header below that folder).
set(_layers_attention attention)
set(_third_attention "Eigen/" "sys/mman.h")
set(_layers_formats attention formats)
set(_third_formats "Eigen/" "nlohmann/" "xtl/" "xxhash.h")
set(_layers_numpy attention formats numpy)
set(_third_numpy "Eigen/" "nlohmann/")
set(_layers_analysis attention formats numpy analysis)
set(_third_analysis "Eigen/" "nlohmann/")
set(_layers_models attention formats numpy analysis models)
set(_third_models "Eigen/" "nlohmann/")
set(_layers_cli attention formats numpy analysis models)
set(_third_cli "Eigen/" "nlohmann/")
set(_layers_bindings/wasm attention formats numpy analysis models)
set(_third_bindings/wasm "Eigen/" "emscripten/" "malloc.h")
set(_layers_bindings/python attention formats numpy analysis models)
set(_third_bindings/python "Eigen/" "nlohmann/" "pybind11/")
set(_layers_bench attention)
set(_third_bench "Eigen/" "nlohmann/" "sys/resource.h")
set(MHA_FOLDERS ${MHA_LAYERS} cli bindings/wasm bindings/python bench)

# Every C++ source or header, whatever its extension.
set(MHA_CXX_EXTENSIONS hpp cpp h hh hxx cc cxx c inc ipp tpp)
foreach(_folder IN LISTS MHA_FOLDERS)
  set(MHA_CXX_GLOBS_${_folder} "")
  foreach(_ext IN LISTS MHA_CXX_EXTENSIONS)
    list(APPEND MHA_CXX_GLOBS_${_folder} "${_cpp}/${_folder}/*.${_ext}")
  endforeach()
endforeach()
set(MHA_CXX_GLOBS_all "")
foreach(_ext IN LISTS MHA_CXX_EXTENSIONS)
  list(APPEND MHA_CXX_GLOBS_all "${_cpp}/*.${_ext}")
endforeach()

set(_errors "")
set(_checked 0)
foreach(_folder IN LISTS MHA_FOLDERS)
  file(GLOB_RECURSE _files ${MHA_CXX_GLOBS_${_folder}})
  foreach(_file IN LISTS _files)
    math(EXPR _checked "${_checked} + 1")
    file(RELATIVE_PATH _rel "${MHA_SOURCE_DIR}" "${_file}")
    string(REPLACE ";" ", " _may_layers "${_layers_${_folder}}")
    string(REPLACE ";" ", " _may_third "${_third_${_folder}}")
    get_filename_component(_dir "${_file}" DIRECTORY)
    file(STRINGS "${_file}" _lines)
    set(_n 0)
    foreach(_line IN LISTS _lines)
      math(EXPR _n "${_n} + 1")
      if(NOT _line MATCHES "^[ \t]*#[ \t]*include[ \t]*([<\"])([^>\"]+)[>\"]")
        continue()
      endif()
      set(_kind "${CMAKE_MATCH_1}")
      set(_header "${CMAKE_MATCH_2}")
      if(_kind STREQUAL "\"" AND _header MATCHES "^mha/")
        # Our own header: which layer holds it?
        set(_owner "")
        foreach(_layer IN LISTS MHA_LAYERS)
          if(EXISTS "${_cpp}/${_layer}/${_header}")
            set(_owner "${_layer}")
          endif()
        endforeach()
        if(_owner STREQUAL "")
          list(APPEND _errors "${_rel}:${_n}: \"${_header}\" is in no layer's mha/ folder")
        elseif(NOT _owner IN_LIST _layers_${_folder})
          list(APPEND _errors
               "${_rel}:${_n}: includes \"${_header}\" of layer ${_owner}, which cpp/${_folder} may not use (allowed: ${_may_layers})")
        endif()
      elseif(_kind STREQUAL "\"")
        # A file beside this one or below it, in the same folder: never a path out of it
        # ("../"), which could reach another layer's headers without its include path.
        if(_header MATCHES "(^|/)\\.\\.(/|$)" OR _header MATCHES "^/")
          list(APPEND _errors "${_rel}:${_n}: \"${_header}\" leaves the file's folder (include another layer's header as \"mha/...\")")
        elseif(NOT EXISTS "${_dir}/${_header}")
          list(APPEND _errors "${_rel}:${_n}: \"${_header}\" is neither mha/... nor a file beside it")
        endif()
      elseif(NOT _header MATCHES "[./]")
        # <vector>, <cmath>, ...: the C++ standard library.
      else()
        set(_ok FALSE)
        foreach(_allowed IN LISTS _third_${_folder})
          string(LENGTH "${_allowed}" _len)
          string(SUBSTRING "${_header}" 0 ${_len} _prefix)
          if(_allowed MATCHES "/$" AND _prefix STREQUAL _allowed)
            set(_ok TRUE)
          elseif(_header STREQUAL _allowed)
            set(_ok TRUE)
          endif()
        endforeach()
        if(NOT _ok)
          list(APPEND _errors
               "${_rel}:${_n}: includes <${_header}>, which cpp/${_folder} may not use (allowed: ${_may_third} and the standard library)")
        endif()
      endif()
    endforeach()
  endforeach()
endforeach()

# The build must say the same: a folder's CMakeLists.txt names no library of a layer it may not
# use (comments aside), so no target links upward.
foreach(_folder IN LISTS MHA_FOLDERS)
  set(_cmake "${_cpp}/${_folder}/CMakeLists.txt")
  if(NOT EXISTS "${_cmake}")
    continue()
  endif()
  string(REPLACE ";" ", " _may_layers "${_layers_${_folder}}")
  file(STRINGS "${_cmake}" _lines)
  set(_n 0)
  foreach(_line IN LISTS _lines)
    math(EXPR _n "${_n} + 1")
    string(REGEX REPLACE "#.*" "" _code "${_line}")
    string(REGEX MATCHALL "mha_(attention|numpy|formats|analysis|models)" _targets "${_code}")
    foreach(_target IN LISTS _targets)
      string(REPLACE "mha_" "" _layer "${_target}")
      if(NOT _layer IN_LIST _layers_${_folder})
        list(APPEND _errors
             "cpp/${_folder}/CMakeLists.txt:${_n}: names ${_target}, which cpp/${_folder} may not use (allowed: ${_may_layers})")
      endif()
    endforeach()
  endforeach()
endforeach()

# Every folder under cpp/ holding C++ must be one of the above.
string(REPLACE ";" ", " _folders_text "${MHA_FOLDERS}")
file(GLOB_RECURSE _all RELATIVE "${_cpp}" ${MHA_CXX_GLOBS_all})
foreach(_file IN LISTS _all)
  set(_known FALSE)
  foreach(_folder IN LISTS MHA_FOLDERS)
    string(LENGTH "${_folder}/" _len)
    string(SUBSTRING "${_file}" 0 ${_len} _prefix)
    if(_prefix STREQUAL "${_folder}/")
      set(_known TRUE)
    endif()
  endforeach()
  if(NOT _known)
    list(APPEND _errors "cpp/${_file}: in no folder the layering check knows (${_folders_text})")
  endif()
endforeach()

if(_errors)
  list(LENGTH _errors _count)
  string(REPLACE ";" "\n  " _text "${_errors}")
  message(FATAL_ERROR "layering: ${_count} problem(s) break the C++ layers:\n  ${_text}")
endif()
message(STATUS "layering: ${_checked} files under cpp/ include only their own and lower layers")
