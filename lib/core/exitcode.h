/*
 * exitcode.h - the exit statuses every foldkit tool uses.
 *
 * 0 success; 1 a runtime or data error (unreadable file, malformed input,
 * failed write); 2 a usage error (unknown option, bad option value).
 * Man pages list them under EXIT STATUS.
 */
#ifndef FOLDKIT_EXITCODE_H
#define FOLDKIT_EXITCODE_H

enum fk_exit {
	FK_EXIT_OK = 0,
	FK_EXIT_FAILURE = 1,
	FK_EXIT_USAGE = 2,
};

#endif
