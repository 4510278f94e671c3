# Writes OUT, a C++ file defining tle::sema::bundledModules(): every .py file under DIR as a
# Python module the compiler has built in (name from its path: a/b/c.py is module a.b.c), its
# text in a raw string literal. Run with cmake -DDIR=... -DOUT=... -P TLEEmbedModules.cmake.
file(GLOB_RECURSE _files RELATIVE ${DIR} ${DIR}/*.py)
list(SORT _files)
set(_body "")
foreach(_f IN LISTS _files)
  string(REGEX REPLACE "\\.py$" "" _name "${_f}")
  string(REPLACE "/" "." _name "${_name}")
  file(READ ${DIR}/${_f} _text)
  string(FIND "${_text}" ")tle_py\"" _clash)
  if(NOT _clash EQUAL -1)
    message(FATAL_ERROR "${_f} holds the raw string's delimiter )tle_py\"")
  endif()
  string(APPEND _body "      {\"${_name}\", \"${_f}\", R\"tle_py(${_text})tle_py\"},\n")
endforeach()
file(WRITE ${OUT}.tmp "// Generated from src/Sema/Bundled by cmake/TLEEmbedModules.cmake: do not edit.\n"
  "#include \"Bundled.h\"\n\nnamespace tle::sema {\n\n"
  "const std::vector<BundledModule> &bundledModules() {\n"
  "  static const std::vector<BundledModule> modules = {\n${_body}  };\n  return modules;\n}\n\n"
  "} // namespace tle::sema\n")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
