# Writes a man page and a bash completion for one tool from its --help text (run at build time by cmake/TLEInstall.cmake).
#
# cmake -DTOOL=path/to/tool -DNAME=tlec -DVERSION=0.1.0 -DMAN=out/tlec.1 -DCOMPLETION=out/tlec -P TLEHelpDocs.cmake
# -DEXTRA_HELP="--tune --help": a second mode's help (tle-bench's autotuning), appended to both.
foreach(_var TOOL NAME VERSION MAN COMPLETION)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "TLEHelpDocs.cmake: -D${_var}=... is required")
  endif()
endforeach()
execute_process(COMMAND ${TOOL} --help OUTPUT_VARIABLE _help RESULT_VARIABLE _rc ERROR_QUIET)
if(NOT _rc EQUAL 0 OR _help STREQUAL "")
  message(FATAL_ERROR "${NAME} --help failed (${_rc})")
endif()
if(DEFINED EXTRA_HELP AND NOT EXTRA_HELP STREQUAL "")
  string(REPLACE " " ";" _extra "${EXTRA_HELP}")
  execute_process(COMMAND ${TOOL} ${_extra} OUTPUT_VARIABLE _help2 RESULT_VARIABLE _rc2 ERROR_QUIET)
  if(NOT _rc2 EQUAL 0 OR _help2 STREQUAL "")
    message(FATAL_ERROR "${NAME} ${EXTRA_HELP} failed (${_rc2})")
  endif()
  set(_help "${_help}\n${NAME} ${EXTRA_HELP}:\n\n${_help2}")
endif()

# The summary: the first line of the help, after a leading "NAME: ".
string(REGEX MATCH "^[^\n]*" _summary "${_help}")
string(REGEX REPLACE "^${NAME}: *" "" _summary "${_summary}")
# troff: escape backslashes, and lines starting with '.' or '\''.
string(REPLACE "\\" "\\e" _body "${_help}")
string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" _body "${_body}")
string(TOUPPER "${NAME}" _upper)
file(WRITE ${MAN} ".\\\" ${NAME}(1): generated from `${NAME} --help` by cmake/TLEHelpDocs.cmake.
.TH ${_upper} 1 \"\" \"TLE ${VERSION}\" \"TLE manual\"
.SH NAME
${NAME} \\- ${_summary}
.SH SYNOPSIS
.B ${NAME}
[\\fIOPTIONS\\fR] ...
.SH DESCRIPTION
The options, as \\fB${NAME} --help\\fR prints them:
.PP
.nf
${_body}.fi
.SH SEE ALSO
.BR tlec (1),
.BR tle-link (1),
.BR tle-run (1),
.BR tle-inspect (1),
.BR tle-bench (1);
docs/aot.md, docs/runtime.md and docs/bench.md of the TLE sources.
")

# Every option spelled in the help ("-n,--kernel TEXT" gives -n and --kernel).
string(REGEX MATCHALL "(^|[ ,\n])--?[A-Za-z][A-Za-z0-9-]*" _opts "${_help}")
set(_words "")
foreach(_o IN LISTS _opts)
  string(REGEX REPLACE "^[ ,\n]" "" _o "${_o}")
  list(APPEND _words "${_o}")
endforeach()
list(REMOVE_DUPLICATES _words)
list(SORT _words)
string(JOIN " " _words ${_words})
string(REPLACE "-" "_" _fn "${NAME}")
file(WRITE ${COMPLETION} "# bash completion for ${NAME}: its options (from `${NAME} --help`), else file names.
_tle_${_fn}() {
  local cur=\"\${COMP_WORDS[COMP_CWORD]}\"
  if [[ \"\$cur\" == -* ]]; then
    COMPREPLY=( \$(compgen -W \"${_words}\" -- \"\$cur\") )
  else
    COMPREPLY=( \$(compgen -f -- \"\$cur\") )
  fi
}
complete -o filenames -F _tle_${_fn} ${NAME}
")
