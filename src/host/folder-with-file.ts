// Host.makeFolderWith over ssh: one folder (not its parents) made atomically with one private file
// in it, by one program (one round trip: a mkdir and then a write took two). `mkdir` is atomic
// on every POSIX filesystem, so of many callers exactly one makes the folder: a lock.

/** FOLDER_WITH_FILE_PROGRAM's exit when the folder could not be made (it exists, or its parent does not). */
export const FOLDER_NOT_MADE = 3;

/**
 * $1 the folder, $2 its file's name, $3 the file's text (a line end added). The folder is made
 * 0700, the file 0600; a folder made whose file cannot be written is removed again (exit 1).
 */
export const FOLDER_WITH_FILE_PROGRAM = [
  'umask 077',
  `mkdir -m 700 -- "$1" 2>/dev/null || exit ${FOLDER_NOT_MADE}`,
  'printf "%s\\n" "$3" >"$1/$2" || { rm -f -- "$1/$2"; rmdir -- "$1"; exit 1; }',
].join('\n');
