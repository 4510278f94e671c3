# tle_add_kernels(): compiles .tle kernels with tlec at build time into a static library of typed launchers with the modules embedded.
#
#   tle_add_kernels(<target>
#     [ARCHS arch...]           targets of every kernel (default: TLE_KERNEL_ARCHS, else sm_80 sm_90a)
#     [FORMAT cubin|ptx]        module format (default: TLE_KERNEL_FORMAT, else cubin; ptx needs no
#                               CUDA toolkit and is JIT-compiled by the driver at first launch)
#     [C_API]                   also C launchers <name>_c.h (the project must enable C)
#     [OUTPUT_DIR dir]          generated files (default: <current binary dir>/<target>_tle)
#     [INCLUDE_DIRS dir...]     tlec -I: directories searched for the modules kernels import (after
#                               each source's own package root); the files a kernel imported are
#                               dependencies of its module (tlec --depfile)
#     [SOURCES file.tle...]     each compiled as the `# Compile: tlec ...` line of its header says
#                               (-n, -s "...", -w, -ns, -g "...", -D); header <file stem>.h
#     [KERNEL file.tle          one specialisation, repeatable:
#        [NAME launcher]        the launcher function and header <launcher>.h (default: the kernel's
#                               name in header <file stem>.h); KERNEL entries with the same NAME
#                               become one dispatcher, tried in the order given
#        [KERNEL_NAME name]     tlec -n: the kernel, when the file has several
#        [SIGNATURE "sig"]      tlec -s: Triton's AOT signature, e.g. "*fp32:16, *fp32:16, i32, 1024"
#        [NUM_WARPS n] [NUM_STAGES n]
#        [GRID "x, y, z"]       tlec -g: grid expressions, e.g. "cdiv(n, BLOCK), 1, 1"
#        [DEFINES NAME=VALUE...] tlec -D
#        [WHEN "PRED"...]       shape predicates on integer arguments the dispatcher also requires
#                               for this entry, e.g. WHEN "M <= 64" "N % 128 == 0" (tle-link --when)
#        [ARCHS arch...]]...    targets of this specialisation
#   )
#
# The library links TLE::tle_rt publicly and has the launcher headers on its public include path:
# `#include "<name>.h"` and call `<name>(stream, args...)`. See docs/aot.md.

# Reads the `# Compile: tlec ...` line of `file` into <prefix>_KERNEL_NAME, _SIGNATURE, _NUM_WARPS,
# _NUM_STAGES, _GRID and _DEFINES in the caller's scope.
function(_tle_parse_compile_line file prefix)
  file(STRINGS "${file}" _line REGEX "^# Compile: tlec " LIMIT_COUNT 1)
  if(NOT _line)
    message(FATAL_ERROR "tle_add_kernels: ${file} has no `# Compile: tlec ...` line; list it as "
                        "KERNEL ${file} SIGNATURE \"...\" instead of under SOURCES")
  endif()
  foreach(_field KERNEL_NAME SIGNATURE NUM_WARPS NUM_STAGES GRID DEFINES)
    set(_${_field} "")
  endforeach()
  if(_line MATCHES " -s \"([^\"]*)\"")
    set(_SIGNATURE "${CMAKE_MATCH_1}")
  endif()
  if(_line MATCHES " -g \"([^\"]*)\"")
    set(_GRID "${CMAKE_MATCH_1}")
  endif()
  if(_line MATCHES " (-w|--num-warps)[ =]([0-9]+)")
    set(_NUM_WARPS "${CMAKE_MATCH_2}")
  endif()
  if(_line MATCHES " (-ns|--num-stages)[ =]([0-9]+)")
    set(_NUM_STAGES "${CMAKE_MATCH_2}")
  endif()
  if(_line MATCHES " (-n|--kernel)[ =]([A-Za-z_][A-Za-z0-9_]*)")
    set(_KERNEL_NAME "${CMAKE_MATCH_2}")
  endif()
  string(REGEX MATCHALL " -D ?[A-Za-z_][A-Za-z0-9_]*=[^ ]+" _defs "${_line}")
  foreach(_d IN LISTS _defs)
    string(REGEX REPLACE "^ -D ?" "" _d "${_d}")
    list(APPEND _DEFINES "${_d}")
  endforeach()
  foreach(_field KERNEL_NAME SIGNATURE NUM_WARPS NUM_STAGES GRID DEFINES)
    set(${prefix}_${_field} "${_${_field}}" PARENT_SCOPE)
  endforeach()
endfunction()

# The target, or the executable file of an imported target, to depend on for tool `tool`.
function(_tle_tool_dependency tool out)
  get_target_property(_imported ${tool} IMPORTED)
  if(_imported)
    set(${out} "$<TARGET_FILE:${tool}>" PARENT_SCOPE)
  else()
    set(${out} ${tool} PARENT_SCOPE)
  endif()
endfunction()

function(tle_add_kernels target)
  # Tools: the installed package's, or this project's own when used in the TLE build itself.
  foreach(_tool tlec tle-link tle_rt)
    string(MAKE_C_IDENTIFIER "${_tool}" _var)
    if(TARGET TLE::${_tool})
      set(_${_var} TLE::${_tool})
    elseif(TARGET ${_tool})
      set(_${_var} ${_tool})
    else()
      message(FATAL_ERROR "tle_add_kernels: no ${_tool} target; call find_package(TLE) first")
    endif()
  endforeach()
  _tle_tool_dependency(${_tlec} _tlec_dep)
  _tle_tool_dependency(${_tle_link} _link_dep)

  set(_archs ${TLE_KERNEL_ARCHS})
  if(NOT _archs)
    set(_archs sm_80 sm_90a)
  endif()
  set(_format ${TLE_KERNEL_FORMAT})
  if(NOT _format)
    set(_format cubin)
  endif()
  set(_c_api OFF)
  set(_outdir ${CMAKE_CURRENT_BINARY_DIR}/${target}_tle)

  # Parse: top-level keywords, SOURCES lists, and KERNEL entries with their own keywords.
  set(_n 0)          # number of entries
  set(_entry -1)     # the entry being read, -1 outside KERNEL
  set(_key "")       # the keyword whose values follow
  set(_top_archs "")
  set(_top_archs_given OFF)
  set(_include_dirs "")
  foreach(_arg IN LISTS ARGN)
    if(_arg STREQUAL "KERNEL")
      set(_entry ${_n})
      math(EXPR _n "${_n} + 1")
      set(_key FILE)
      foreach(_f FILE NAME KERNEL_NAME SIGNATURE NUM_WARPS NUM_STAGES GRID DEFINES ARCHS FROM_SOURCES WHEN)
        set(_e${_entry}_${_f} "")
      endforeach()
      continue()
    elseif(_arg STREQUAL "SOURCES")
      set(_entry -1)
      set(_key SOURCES)
      continue()
    elseif(_arg STREQUAL "C_API")
      set(_c_api ON)
      set(_key "")
      continue()
    elseif(_arg MATCHES "^(FORMAT|OUTPUT_DIR|INCLUDE_DIRS)$")
      set(_entry -1)
      set(_key ${_arg})
      continue()
    elseif(_arg STREQUAL "ARCHS")
      set(_key ARCHS)
      if(_entry EQUAL -1)
        set(_top_archs_given ON)
      endif()
      continue()
    elseif(_entry GREATER -1 AND _arg MATCHES "^(NAME|KERNEL_NAME|SIGNATURE|NUM_WARPS|NUM_STAGES|GRID|DEFINES|WHEN)$")
      set(_key ${_arg})
      continue()
    endif()
    if(_key STREQUAL "")
      message(FATAL_ERROR "tle_add_kernels(${target}): unexpected '${_arg}'")
    elseif(_key STREQUAL "SOURCES")
      set(_e${_n}_FILE "${_arg}")
      set(_e${_n}_FROM_SOURCES ON)
      foreach(_f NAME ARCHS WHEN)
        set(_e${_n}_${_f} "")
      endforeach()
      math(EXPR _n "${_n} + 1")
    elseif(_key STREQUAL "FORMAT")
      set(_format "${_arg}")
    elseif(_key STREQUAL "OUTPUT_DIR")
      set(_outdir "${_arg}")
    elseif(_key STREQUAL "INCLUDE_DIRS")
      get_filename_component(_dir "${_arg}" ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
      list(APPEND _include_dirs "${_dir}")
    elseif(_key STREQUAL "ARCHS" AND _entry EQUAL -1)
      list(APPEND _top_archs "${_arg}")
    elseif(_key MATCHES "^(ARCHS|DEFINES|WHEN)$")
      list(APPEND _e${_entry}_${_key} "${_arg}")
    else()
      if(NOT "${_e${_entry}_${_key}}" STREQUAL "")
        message(FATAL_ERROR "tle_add_kernels(${target}): ${_key} given twice in one KERNEL entry")
      endif()
      set(_e${_entry}_${_key} "${_arg}")
    endif()
  endforeach()
  if(_top_archs_given)
    set(_archs ${_top_archs})
  endif()
  if(NOT _format MATCHES "^(cubin|ptx)$")
    message(FATAL_ERROR "tle_add_kernels(${target}): FORMAT must be cubin or ptx, not '${_format}'")
  endif()
  if(_n EQUAL 0)
    message(FATAL_ERROR "tle_add_kernels(${target}): no kernels (give SOURCES or KERNEL entries)")
  endif()
  if(_c_api)
    get_property(_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
    if(NOT "C" IN_LIST _languages)
      message(FATAL_ERROR "tle_add_kernels(${target}): C_API needs the C language: project(... LANGUAGES C CXX)")
    endif()
  endif()

  # Imported modules: -I for each include directory, and the files a compilation read as the
  # dependencies of its module, from tlec's depfile where the generator reads depfiles (else every
  # module under the include directories).
  set(_include_args "")
  foreach(_dir IN LISTS _include_dirs)
    list(APPEND _include_args -I ${_dir})
  endforeach()
  set(_use_depfile OFF)
  if(CMAKE_GENERATOR MATCHES "Ninja" OR (CMAKE_GENERATOR MATCHES "Makefiles" AND CMAKE_VERSION VERSION_GREATER_EQUAL 3.20))
    set(_use_depfile ON)
  endif()
  set(_module_deps "")
  if(NOT _use_depfile)
    foreach(_dir IN LISTS _include_dirs)
      file(GLOB_RECURSE _found CONFIGURE_DEPENDS ${_dir}/*.py ${_dir}/*.tle)
      list(APPEND _module_deps ${_found})
    endforeach()
  endif()

  # One tlec command per entry and target; entries are grouped by header into launchers.
  set(_headers "")
  math(EXPR _last "${_n} - 1")
  foreach(_i RANGE ${_last})
    get_filename_component(_file "${_e${_i}_FILE}" ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    if(NOT EXISTS "${_file}")
      message(FATAL_ERROR "tle_add_kernels(${target}): kernel source ${_file} does not exist")
    endif()
    if(_e${_i}_FROM_SOURCES)
      _tle_parse_compile_line("${_file}" _e${_i})
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_file}")
    endif()
    get_filename_component(_stem "${_file}" NAME_WE)
    set(_header "${_e${_i}_NAME}")
    if(NOT _header)
      set(_header ${_stem})
    endif()
    if(NOT _header IN_LIST _headers)
      list(APPEND _headers ${_header})
      set(_h_${_header}_modules "")
      set(_h_${_header}_name "${_e${_i}_NAME}")
      set(_h_${_header}_when "")   # tle-link --when arguments
      set(_h_${_header}_count 0)   # modules so far: the index --when names
    endif()
    set(_args "")
    if(_e${_i}_KERNEL_NAME)
      list(APPEND _args -n ${_e${_i}_KERNEL_NAME})
    endif()
    if(_e${_i}_SIGNATURE)
      list(APPEND _args -s "${_e${_i}_SIGNATURE}")
    endif()
    if(_e${_i}_NUM_WARPS)
      list(APPEND _args -w ${_e${_i}_NUM_WARPS})
    endif()
    if(_e${_i}_NUM_STAGES)
      list(APPEND _args --num-stages ${_e${_i}_NUM_STAGES})
    endif()
    if(_e${_i}_GRID)
      list(APPEND _args -g "${_e${_i}_GRID}")
    endif()
    foreach(_d IN LISTS _e${_i}_DEFINES)
      list(APPEND _args -D "${_d}")
    endforeach()
    set(_entry_archs ${_e${_i}_ARCHS})
    if(NOT _entry_archs)
      set(_entry_archs ${_archs})
    endif()
    foreach(_arch IN LISTS _entry_archs)
      set(_module ${_outdir}/modules/${_header}.${_i}.${_arch}.${_format})
      set(_depfile_args "")
      if(_use_depfile)
        set(_depfile_args --depfile ${_module}.d)
        set(_depfile DEPFILE ${_module}.d)
      else()
        set(_depfile "")
      endif()
      add_custom_command(
        OUTPUT ${_module}
        COMMAND ${CMAKE_COMMAND} -E make_directory ${_outdir}/modules
        COMMAND $<TARGET_FILE:${_tlec}> ${_file} ${_include_args} ${_args} --arch ${_arch} -o ${_module}
                ${_depfile_args}
        DEPENDS ${_file} ${_tlec_dep} ${_module_deps}
        ${_depfile}
        COMMENT "tlec ${_stem} (${_header} #${_i}) for ${_arch}"
        VERBATIM)
      list(APPEND _h_${_header}_modules ${_module})
      foreach(_w IN LISTS _e${_i}_WHEN)
        list(APPEND _h_${_header}_when --when "${_h_${_header}_count}: ${_w}")
      endforeach()
      math(EXPR _h_${_header}_count "${_h_${_header}_count} + 1")
    endforeach()
  endforeach()

  # One tle-link command per launcher: a header and its definitions with every module embedded.
  set(_sources "")
  foreach(_header IN LISTS _headers)
    set(_outputs ${_outdir}/include/${_header}.h ${_outdir}/src/${_header}.cpp)
    set(_link_args -o ${_outdir}/include/${_header}.h --source ${_outdir}/src/${_header}.cpp)
    if(_c_api)
      list(APPEND _outputs ${_outdir}/include/${_header}_c.h ${_outdir}/src/${_header}_c.c)
      list(APPEND _link_args --c-header ${_outdir}/include/${_header}_c.h --c-source ${_outdir}/src/${_header}_c.c)
    endif()
    if(_h_${_header}_name)
      list(APPEND _link_args -n ${_h_${_header}_name})
    endif()
    add_custom_command(
      OUTPUT ${_outputs}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${_outdir}/include ${_outdir}/src
      COMMAND $<TARGET_FILE:${_tle_link}> ${_h_${_header}_modules} ${_h_${_header}_when} ${_link_args}
      DEPENDS ${_h_${_header}_modules} ${_link_dep}
      COMMENT "tle-link ${_header}"
      VERBATIM)
    list(APPEND _sources ${_outdir}/src/${_header}.cpp)
    if(_c_api)
      list(APPEND _sources ${_outdir}/src/${_header}_c.c)
    endif()
  endforeach()

  find_package(Threads REQUIRED)
  add_library(${target} STATIC ${_sources})
  target_include_directories(${target} PUBLIC ${_outdir}/include)
  target_link_libraries(${target} PUBLIC ${_tle_rt} Threads::Threads)
  target_compile_features(${target} PUBLIC cxx_std_17)
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()
