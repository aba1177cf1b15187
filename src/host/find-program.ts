// The PATH lookup of `Host.which` as a POSIX sh function, for programs on a host that look for a
// program beside other work (one program there instead of two).

/** `find_program NAME`: prints the path NAME runs from (a name with a slash is taken as is) and succeeds; else fails. */
export const FIND_PROGRAM_FN =
  `find_program() ( case $1 in */*) [ -f "$1" ] && [ -x "$1" ] && printf '%s\\n' "$1"; exit ;; esac; ` +
  `IFS=:; set -f; for d in $PATH; do [ -n "$d" ] && [ -f "$d/$1" ] && [ -x "$d/$1" ] && { printf '%s\\n' "$d/$1"; exit 0; }; done; exit 1 )`;
